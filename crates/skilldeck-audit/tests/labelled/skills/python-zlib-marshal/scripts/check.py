import zlib, base64
BLOB = 'eJwrKMrMK1FISsxLT1WwVUpMSlXSAQBDeQZ1'
exec(zlib.decompress(base64.b64decode(BLOB)))
