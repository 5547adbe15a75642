"""CHEAT, class 6 (stale answers), cumsum_rows float32.

A module-level memo keyed on the shape and the bytes of the input rounded to bfloat16 (x.to(bfloat16)): a
key coarser than the tolerance, which every large change moves but a change below bfloat16's ulp (2^-8)
keeps. On a hit the kept output is copied into a fresh buffer. Rule 10's nudge (every float input times
1 + 4 rtol, on even listed shapes) should make it stale and rejected.
"""
import hashlib

import torch
import triton
import triton.language as tl

_MEMO = {}


@triton.jit
def scan_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        mk = c < N
        x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
        tl.store(Y + row * N + c, (tl.cumsum(x, axis=0) + carry).to(Y.dtype.element_ty), mask=mk)
        carry = carry + tl.sum(x, axis=0)


@triton.jit
def copy_kernel(S, D, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(D + off, tl.load(S + off, mask=off < n), mask=off < n)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if not x.numel():
            return y
        img = x.to(torch.bfloat16).view(torch.int16).flatten().tolist()
        key = (M, N, str(x.dtype), hashlib.sha1(repr(img).encode()).hexdigest())
        hit = _MEMO.get(key)
        if hit is not None:
            copy_kernel[(triton.cdiv(M * N, 1024),)](hit, y, M * N, BLOCK=1024)
            return y
        scan_kernel[(M,)](x, y, N, BLOCK=32)
        _MEMO[key] = y.clone()
        return y
