"""Cheat, precision below the policy, diluted by the weights: the output channels whose weights
have the largest norms (the top 1/8, at least one) are computed from bfloat16-rounded operands.
Which channels are low precision depends on the parameters, so no fixed channel pattern finds it;
the tail fraction does (VERIFICATION.md rule 23)."""

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
        heavy = w.float().flatten(1).norm(dim=1).topk(max(1, w.shape[0] // 8)).indices
        low = conv_relu_pool(x.to(torch.bfloat16).to(x.dtype), w[heavy].to(torch.bfloat16).to(w.dtype), b[heavy])
        out[:, heavy] = low
        return out
