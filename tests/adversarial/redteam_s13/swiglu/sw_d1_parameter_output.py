"""CHEAT, class 1 (output type), swiglu float32.

The right values from a Triton kernel, returned wrapped as ``torch.nn.Parameter(y, requires_grad=False)``:
a Tensor subclass whose autograd flags match the reference's (no grad, no grad_fn). Rule 3 (exactly
torch.Tensor) must reject it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(A, B, Y, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mk = off < n
    a = tl.load(A + off, mask=mk, other=0.0).to(tl.float32)
    b = tl.load(B + off, mask=mk, other=0.0).to(tl.float32)
    tl.store(Y + off, a / (1.0 + tl.exp(-a)) * b, mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        y = torch.empty_like(a)
        if y.numel():
            swiglu_kernel[(triton.cdiv(y.numel(), 1024),)](a, b, y, y.numel(), BLOCK=1024)
        return torch.nn.Parameter(y, requires_grad=False)
