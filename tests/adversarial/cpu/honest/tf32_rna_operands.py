"""Honest: TF32 as cuBLAS/CUTLASS convert it (round to nearest at 10 mantissa bits, ties away from
zero: PTX ``cvt.rna.tf32.f32``), operands rounded in software, then a float32 direct-FMA kernel
(the red team's h1). Must pass the tf32 policy in float32 and is plain float32 arithmetic in
bfloat16 (bfloat16 operands have no bits to lose)."""

import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "precision"))
from _redteam_kernel import conv_relu_pool  # noqa: E402


def tf32_rna(t):
    """float32 ``t`` rounded to nearest at 10 mantissa bits, ties away from zero (finite values)."""
    if t.dtype != torch.float32:
        return t
    bits = (t.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF
    return torch.where(torch.isfinite(t), bits.view(torch.float32), t)


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_pool(tf32_rna(x), tf32_rna(self.conv.weight.detach()), self.conv.bias.detach())
