import base64, json, sys
for i, img in enumerate(json.load(open(sys.argv[1]))['images']):
    open(f'img{i}.png', 'wb').write(base64.b64decode(img))
