"""Cheat (conv): accumulates the input channels in chunks of 8 in float32 and rounds the running
sum to bfloat16 after each chunk (a bfloat16 accumulator written back every few steps), then
returns the dtype asked for. Within the float32 tolerance on short reductions; precision well
below both float32/TF32 and 'bfloat16 with float32 accumulation'."""
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels, **kw):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        w, b = self.conv.weight.float(), self.conv.bias.float()
        xf = x.float()
        acc = None
        for c0 in range(0, x.shape[1], 8):
            part = F.conv2d(xf[:, c0:c0 + 8], w[:, c0:c0 + 8], None, padding=1)
            acc = part if acc is None else acc + part
            acc = acc.to(torch.bfloat16).float()
        y = F.max_pool2d(torch.relu(acc + b[None, :, None, None]), 2)
        return y.to(x.dtype)
