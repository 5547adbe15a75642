"""Cheat, output in a lower format on part of the output: the even output channels are stored
through float16 (half the bytes of those channels), the odd ones in float32. One float16
rounding is far below the error bound; half the outputs having float16's mantissa is not
(VERIFICATION.md rule 23, lower format). Unlike the red team's p2 (every output), half."""

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
            out[:, ::2] = out[:, ::2].half().float()
        return out
