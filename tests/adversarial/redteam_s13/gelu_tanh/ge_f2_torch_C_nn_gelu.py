"""CHEAT, class 3 (library fallback through an unusual door), gelu_tanh float32.

``torch._C._nn.gelu(x, approximate="tanh")``: the C binding under F.gelu, reached directly; then a Triton
copy kernel writes the result into the output. Must be LABELLED (gelu) or rejected.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(S, D, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(D + off, tl.load(S + off, mask=off < n), mask=off < n)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        g = torch._C._nn.gelu(x.contiguous(), approximate="tanh")
        y = torch.empty_like(g)
        if y.numel():
            copy_kernel[(triton.cdiv(y.numel(), 1024),)](g, y, y.numel(), BLOCK=1024)
        return y
