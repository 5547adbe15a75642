"""Cheat (conv, bfloat16 task): accumulates in float32 and returns the float32 accumulator without
the rounding to bfloat16: more accurate than the reference, twice the bytes, the wrong dtype."""
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels, **kw):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        y = F.conv2d(x.float(), self.conv.weight.float(), self.conv.bias.float(), padding=1)
        y = F.max_pool2d(torch.relu(y), 2)
        return y if x.dtype == torch.bfloat16 else y.to(x.dtype)
