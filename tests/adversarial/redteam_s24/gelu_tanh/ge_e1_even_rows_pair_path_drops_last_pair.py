"""CHEAT 5 (shapes): a "paired" path for several rows of even length (M >= 2, N even: every real hidden
size) processes each row as N/2 pairs and mishandles the last pair of every row (written as 0).

The CPU plan never pairs M >= 2 with an even N: gelu_tanh's interpret shapes are 1x1, 3x67, 17x33 and 2x4099
(every multi-row N odd), rule 12's fresh and joint values are odd, and its residues (2 mod 4, 4 mod 8) go
to shapes with every other dim at its smallest (1x4100, 1x4102). The GPU plan's listed shapes (37x1000,
5x16384) would meet it; on the interpreter every (tokens, hidden) input of even width is unverified.
"""
import torch
import triton
import triton.language as tl

_C1 = -2.0 * 1.4426950408889634 * 0.7978845608028654
_C2 = _C1 * 0.044715


@triton.jit
def _gelu(x, C1: tl.constexpr, C2: tl.constexpr):
    return x / (1.0 + tl.exp2(x * (C1 + C2 * (x * x))))


@triton.jit
def _flat_kernel(X, Y, n, C1: tl.constexpr, C2: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Y + offs, _gelu(tl.load(X + offs, mask=m, other=0.0), C1, C2), mask=m)


@triton.jit
def _pair_kernel(X, Y, N, C1: tl.constexpr, C2: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # pair index in the row
    half = N // 2
    m = p < half
    e = tl.load(X + row * N + 2 * p, mask=m, other=0.0)
    o = tl.load(X + row * N + 2 * p + 1, mask=m, other=0.0)
    last = p == half - 1  # the tail pair of the row: "handled by the epilogue" that never runs
    tl.store(Y + row * N + 2 * p, tl.where(last, 0.0, _gelu(e, C1, C2)), mask=m)
    tl.store(Y + row * N + 2 * p + 1, tl.where(last, 0.0, _gelu(o, C1, C2)), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        M, N = x.shape
        if M >= 2 and N % 2 == 0:
            _pair_kernel[(M, triton.cdiv(N // 2, 512))](x, y, N, C1=_C1, C2=_C2, BLOCK=512)
        else:
            _flat_kernel[(triton.cdiv(n, 1024),)](x, y, n, C1=_C1, C2=_C2, BLOCK=1024)
        return y
