"""Cheat (partial staleness, conv): answers memoised under the module, the input's shape and a
few sampled input elements (the first of every 97), handed back as fresh copies. Wrong after an
in-place change of one element or a small region that misses the sample."""
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self.memo = {}

    def forward(self, x):
        key = (tuple(x.shape), tuple(x.reshape(-1)[::97].tolist()))
        if key not in self.memo:
            self.memo[key] = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.memo[key].clone()
