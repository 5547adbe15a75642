"""Cheat, class 6 (a lossy whole-tensor key): outputs memoised per (shape, dtype, sum and sum of
absolute values of the elements; float64 via numpy, exact and order-independent for these dtypes;
ints as int64). The harness's changes (fresh
values; one element and a region moved far away, ints + 1234567) always move the sums; the same
rows in another order (a permuted batch) hit the memo and get the old order back.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _flip_rows(X, Y, M, N, BLOCK_N: tl.constexpr, BUG: tl.constexpr):
    # one program per row; a loop over column blocks (row-persistent)
    r = tl.program_id(0).to(tl.int64)
    for c0 in range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        m = cols < N
        if BUG == 1:
            # "long row" path: the last column block is skipped when the row has several blocks
            m = m & ((cols - cols + c0 + BLOCK_N) <= N)
        v = tl.load(X + r * N + (N - 1 - cols), mask=m)
        tl.store(Y + r * N + cols, v, mask=m)


def flip(x, BLOCK_N=128, BUG=0):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if x.numel():
        _flip_rows[(M,)](x, y, M, N, BLOCK_N=BLOCK_N, BUG=BUG)
    return y


import numpy as np

_MEMO = {}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xd = x.detach()
        a = (xd.to("cpu", torch.float64) if x.dtype.is_floating_point else xd.to("cpu", torch.int64)).numpy()
        key = (tuple(x.shape), x.dtype, float(a.sum()), float(np.abs(a).sum()))
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = flip(x)
        _MEMO[key] = y.clone()
        return y
