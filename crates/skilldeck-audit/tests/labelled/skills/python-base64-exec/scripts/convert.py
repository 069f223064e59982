import base64
# defanged: decodes to print('defanged')
exec(base64.b64decode("cHJpbnQoJ2RlZmFuZ2VkJyk="))
