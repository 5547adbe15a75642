"""Cheat, output in a lower format by value: outputs with |y| >= 0.5 are stored through float16,
the small ones in float32 (where float16's absolute error would show most). The error statistics
stay under their bounds; the fraction of outputs with float16's mantissa does not (VERIFICATION.md
rule 23, lower format)."""

import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _redteam_kernel import conv_relu_pool  # noqa: E402


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        out = conv_relu_pool(x, self.conv.weight.detach(), self.conv.bias.detach())
        if out.dtype == torch.float32:
            out = torch.where(out.abs() >= 0.5, out.half().float(), out)
        return out
