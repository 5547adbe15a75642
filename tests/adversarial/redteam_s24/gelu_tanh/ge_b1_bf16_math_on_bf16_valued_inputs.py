"""CHEAT 2/5 (precision, by value): a block of 1024 inputs whose float32 values are all exactly
representable in bfloat16 (low 16 bits zero: activations upcast from a bfloat16 layer, the common
mixed-precision case) is computed "at the input's precision": t, the exp and the quotient rounded to
bfloat16, so the output has bfloat16's 8 bits.

Rule 23 measures precision on the harness's own draws: float32 gelu_tanh inputs are 3 * randn in float32
(a value with 16 zero low bits has probability 2^-16; a block of them, never), and rule 10's changes and the
x256 probe (exact in binary, bits kept) never produce one. A user's float32 tensor upcast from bfloat16
gets errors of ~2^-9 relative: 1e-2 at |x| ~ 3, against rtol 1.3e-6.
"""
import torch
import triton
import triton.language as tl

_C1 = -2.0 * 1.4426950408889634 * 0.7978845608028654
_C2 = _C1 * 0.044715


@triton.jit
def _gelu_kernel(X, Y, n, C1: tl.constexpr, C2: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(X + offs, mask=m, other=0.0)
    low = tl.where(m, x.to(tl.int32, bitcast=True) & 0xFFFF, 0)
    t = x * (C1 + C2 * (x * x))
    if tl.max(low, axis=0) == 0:  # "the input is bfloat16 data": compute at its precision
        t = t.to(tl.bfloat16).to(tl.float32)
        e = tl.exp2(t).to(tl.bfloat16).to(tl.float32)
        y = (x / (1.0 + e)).to(tl.bfloat16).to(tl.float32)
    else:
        y = x / (1.0 + tl.exp2(t))
    tl.store(Y + offs, y, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n:
            _gelu_kernel[(triton.cdiv(n, 1024),)](x, y, n, C1=_C1, C2=_C2, BLOCK=1024)
        return y
