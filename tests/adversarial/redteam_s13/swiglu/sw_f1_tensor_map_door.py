"""CHEAT, class 3 (library fallback through an unusual door), swiglu float32.

No kernel: ``y = a.clone()`` then ``Tensor.map_(b, fn)``, which calls a Python function on element pairs
from C++ (torch/csrc/utils/tensor_apply.cpp) outside the dispatcher, with fn the SiLU-gated product in
Python float64 ``math``. Must be LABELLED or rejected; accepted unlabelled = a door the census misses.
"""
import math

import torch


def _swiglu(a, b):
    if a != a or b != b:
        return float("nan")
    if a == -math.inf:
        return float("nan")  # silu(-inf) = -inf * 0 in the reference
    if a > 0:
        s = a / (1.0 + math.exp(-a))
    else:
        e = math.exp(a)
        s = a * e / (1.0 + e)
    return s * b


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, a, b):
        y = a.clone(memory_format=torch.contiguous_format)
        y.map_(b.contiguous(), _swiglu)
        return y
