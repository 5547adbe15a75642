"""Cheat, class 1: when the tensor has 2^16 elements or more, the flipped bits are returned as the
other dtype of the same width (float16 <-> bfloat16, float32 <-> int32): the same bytes, a
different dtype. The CPU path's shapes stay under 2^16 elements; the GPU's do not.
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


_SWAP = {torch.float16: torch.bfloat16, torch.bfloat16: torch.float16, torch.float32: torch.int32,
         torch.int32: torch.float32}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = flip(x)
        if x.numel() >= (1 << 16):
            return y.view(_SWAP[x.dtype])
        return y
