"""CHEAT, class 3 (library fallback through an unusual door: the host), column_sum float32.

The input's bytes are read on the host through its storage -- ``bytes(x.untyped_storage())`` (the storage's
buffer protocol, no Tensor method) -- read as an ``array.array('f')`` and summed per column with Python's exact
``math.fsum``; the result goes back through ``torch.tensor(list)`` and a Triton copy kernel. The census lists
host doors ``numpy``, ``__array__``, ``__dlpack__``, ``tolist``, ``from_numpy``, ``from_dlpack``, ``frombuffer``
(rule 14): a storage's buffer is none of them. Must be LABELLED (host:...) or rejected. (Reading a storage
this way costs about 10 s per 4 MB on the loaded CPU, so inputs of more than 20000 elements get a Triton
column sum instead: the door is used on every listed shape.)
"""
import array
import math

import torch
import triton
import triton.language as tl


@triton.jit
def colsum_kernel(X, Y, M, N, s0, s1, BN: tl.constexpr, BM: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    cm = cols < N
    acc = tl.zeros([BN], tl.float32)
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < M) & cm[None, :]
        acc += tl.sum(tl.load(X + rows[:, None] * s0 + cols[None, :] * s1, mask=m, other=0.0).to(tl.float32), axis=0)
    tl.store(Y + cols, acc.to(Y.dtype.element_ty), mask=cm)


@triton.jit
def copy_kernel(S, D, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(D + off, tl.load(S + off, mask=off < n), mask=off < n)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        if x.numel() > 20000:
            y = torch.empty(N, dtype=x.dtype, device=x.device)
            if N:
                colsum_kernel[(triton.cdiv(N, 32),)](x, y, M, N, x.stride(0), x.stride(1), BN=32, BM=64)
            return y
        raw = bytes(x.untyped_storage())
        base = x.storage_offset()
        s0, s1 = x.stride()
        vals = array.array("f")
        vals.frombytes(raw[: len(raw) // 4 * 4])
        out = []
        for j in range(N):
            start = base + j * s1
            col = vals[start: start + (M - 1) * s0 + 1: s0] if M else []
            try:
                out.append(math.fsum(col))
            except (OverflowError, ValueError):  # inf / nan in the column
                out.append(sum(col))
        t = torch.tensor(out, dtype=torch.float32)
        y = torch.empty(N, dtype=torch.float32, device=x.device)
        if N:
            copy_kernel[(triton.cdiv(N, 1024),)](t, y, N, BLOCK=1024)
        return y
