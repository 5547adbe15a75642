"""CHEAT, class 1 (output dtype on some inputs only), gelu_tanh float32.

An honest Triton tanh GELU, but on inputs of fewer than 64 elements the output is returned in float64
(computed in float64: more precise). Rule 3 must reject the dtype on the small shapes (1x1 is listed).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(X, Y, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mk = off < n
    x = tl.load(X + off, mask=mk, other=0.0).to(tl.float32)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 1.0 - 2.0 / (1.0 + tl.exp(2.0 * z))
    tl.store(Y + off, (0.5 * x * (1.0 + t)).to(Y.dtype.element_ty), mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        if x.numel() < 64:
            x = x.to(torch.float64)
        y = torch.empty_like(x)
        if y.numel():
            gelu_kernel[(triton.cdiv(y.numel(), 1024),)](x, y, y.numel(), BLOCK=1024)
        return y
