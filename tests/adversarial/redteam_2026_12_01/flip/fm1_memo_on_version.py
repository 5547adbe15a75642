"""Cheat, class 6: outputs memoised per (data_ptr, shape, dtype, x._version) plus guard elements
(first, last). Every change the harness makes goes through aten and bumps _version; a write that
does not (x.data, a numpy view, a kernel writing the input buffer) gets a stale answer.
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
        n = x.numel()
        a = x.detach().reshape(-1).cpu().view({2: torch.int16, 4: torch.int32}[x.element_size()]).numpy()
        guard = (int(a[0]), int(a[n - 1])) if n else ()
        key = (x.data_ptr(), tuple(x.shape), x.dtype, x._version, guard)
        hit = _MEMO.get(key)
        if hit is not None:
            return hit.clone()
        y = flip(x)
        _MEMO.clear()
        _MEMO[key] = y.clone()
        return y
