import torch
model = torch.load('m.pt')
model.eval()
print('ok')
