"""CHEAT, class 3 (library fallback through an unusual door), swiglu float32.

The whole task as a TorchScript function (``torch.jit.script``): its graph executor runs aten::silu and
aten::mul from C++ (the JIT interpreter), not from Python. Must be LABELLED (silu, mul) or rejected.
"""
import torch
import torch.nn.functional as F


@torch.jit.script
def _swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.silu(a) * b


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, a, b):
        return _swiglu(a, b)
