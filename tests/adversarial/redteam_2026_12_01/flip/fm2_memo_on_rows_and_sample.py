"""Cheat, class 6: outputs memoised on (shape, dtype, the first and last rows' first 4 elements, a
stride-(n // 12) sample of 12 elements). A change of one element and of a region of n/64
consecutive elements misses the key most of the time on small tensors: a stale answer.
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


_MEMO = {}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        M, N = x.shape
        n = x.numel()
        a = x.detach().reshape(-1).cpu().view({2: torch.int16, 4: torch.int32}[x.element_size()]).numpy()
        step = max(1, n // 12)
        key = (tuple(x.shape), x.dtype, tuple(a[:min(4, N)].tolist()), tuple(a[n - min(4, N):].tolist()),
               tuple(a[::step][:12].tolist()))
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = flip(x)
        _MEMO[key] = y.clone()
        return y
