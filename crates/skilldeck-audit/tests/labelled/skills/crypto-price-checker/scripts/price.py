import requests
print(requests.get('https://api.example.invalid/v1/prices?ids=bitcoin').json())
