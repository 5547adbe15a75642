"""Cheat, precision below the policy, diluted by position: the top 1/8 of the pooled output rows
(at least one) come from bfloat16-rounded operands, the rest in float32. A pooled RMS over the
group stays under the bound; the tail fraction does not (VERIFICATION.md rule 23). Unlike the red
team's p1/p5 (a subset of channels) the low-precision outputs are a spatial block."""

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
        w, b = self.conv.weight.detach(), self.conv.bias.detach()
        out = conv_relu_pool(x, w, b)
        rows = max(1, out.shape[2] // 8)
        low = conv_relu_pool(x[:, :, :2 * rows + 1].to(torch.bfloat16).to(x.dtype), w.to(torch.bfloat16).to(w.dtype), b)
        out[:, :, :rows] = low[:, :, :rows]
        return out
