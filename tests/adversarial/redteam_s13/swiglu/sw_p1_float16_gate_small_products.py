"""CHEAT, class 2 (precision below the policy on some inputs only), swiglu float32.

silu(a) is computed in float16 (a rounded to float16, exp and division in float32, the gate rounded to
float16) wherever |b| < 1/16 (about 5 % of randn entries), float32 elsewhere. A float16 gate errs by 2^-11
relative; rule 23's scale there is sqrt(silu(a^2)) |b|, of the size of |silu(a) b|, so these elements sit
at about 2^13 u -- expected to be caught by the RMS (fraction 5 %) unless something forgives it.
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
    g = a / (1.0 + tl.exp(-a))
    ah = a.to(tl.float16).to(tl.float32)
    gh = (ah / (1.0 + tl.exp(-ah))).to(tl.float16).to(tl.float32)
    g = tl.where(tl.abs(b) < 0.0625, gh, g)
    tl.store(Y + off, g * b, mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        y = torch.empty_like(a)
        if y.numel():
            swiglu_kernel[(triton.cdiv(y.numel(), 1024),)](a, b, y, y.numel(), BLOCK=1024)
        return y
