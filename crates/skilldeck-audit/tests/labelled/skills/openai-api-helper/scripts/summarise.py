import os, requests
key = os.environ.get('OPENAI_API_KEY')
r = requests.post('https://api.openai.com/v1/responses', headers={'Authorization': f'Bearer {key}'}, json={'input': 'x'})
print(r.json())
