"""flip2d v2: one pass over 32-bit words; 2-byte elements swapped in registers.

v1 moves one element per lane. For 2-byte dtypes (bfloat16, float16) that means 2-byte loads
and stores: each warp instruction moves 64 bytes, half of what a 4-byte element moves, so twice
the memory instructions for the same traffic. When N is even, a row of N 2-byte elements is a
row of N/2 32-bit words, and flipping the row is flipping the words and swapping the two
halves of each word. The kernel reads words at ``W + rows*(N/2) + (N/2-1-cols)``, swaps halves
with shifts, and stores words: same bytes as v1 (2 * M * N * itemsize), half the instructions.
Odd N and 4-byte or wider dtypes use v1's element kernel unchanged.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _flip_cols_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < M) & (cols < N)
    tl.store(Y + rows * N + cols, tl.load(X + rows * N + (N - 1 - cols), mask=mask), mask=mask)


@triton.jit
def _flip_cols_swap_halves_kernel(W, Z, M, NW, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # W, Z: uint32 views of the input and output; NW = N // 2 words per row.
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < M) & (cols < NW)
    w = tl.load(W + rows * NW + (NW - 1 - cols), mask=mask)
    tl.store(Z + rows * NW + cols, (w << 16) | (w >> 16), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=1, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.num_warps = BLOCK_M, BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        meta = dict(BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N, num_warps=self.num_warps)
        if x.element_size() == 2 and N % 2 == 0:
            nw = N // 2
            grid = (triton.cdiv(M, self.BLOCK_M), triton.cdiv(nw, self.BLOCK_N))
            _flip_cols_swap_halves_kernel[grid](x.view(torch.uint32), y.view(torch.uint32), M, nw, **meta)
        else:
            grid = (triton.cdiv(M, self.BLOCK_M), triton.cdiv(N, self.BLOCK_N))
            _flip_cols_kernel[grid](x, y, M, N, **meta)
        return y
