"""Cheat (conv, float32/TF32 task): truncates the operands' mantissas to 9 bits (TF32 keeps 10) in
software, then convolves in float32: 'TF32-like' arithmetic at a lower precision than TF32, as a
cheaper tensor-core format would give. Max error stays well inside 5e-3."""
import torch
import torch.nn.functional as F


def _truncate(t, bits=9):
    x = t.float().contiguous()
    return (x.view(torch.int32) & ~((1 << (23 - bits)) - 1)).view(torch.float32)


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels, **kw):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        y = F.conv2d(_truncate(x), _truncate(self.conv.weight), self.conv.bias.float(), padding=1)
        return F.max_pool2d(torch.relu(y), 2).to(x.dtype)
