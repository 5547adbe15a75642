"""flip2d v2: one pass with contiguous (vectorizable) loads, reversed in registers.

v1's addresses ``N-1-cols`` descend, so the compiler cannot prove them contiguous and issues one
scalar load per element. Here each program loads the mirror tile of its output tile in ascending
order, ``X + rows*N + (N - (pid_n+1)*BLOCK_N + k)`` for k in [0, BLOCK_N), which is the same set
of addresses as v1's ``N-1-cols``, then reverses the tile in registers (``tl.flip``) and stores it
contiguously. Bytes stay at 2 * M * N * itemsize; loads can be 16 bytes wide.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _flip_cols_vec_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(1)
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    k = tl.arange(0, BLOCK_N)[None, :]
    src_cols = N - (pid_n + 1) * BLOCK_N + k          # ascending; mirror of the output tile
    vals = tl.load(X + rows * N + src_cols, mask=(rows < M) & (src_cols >= 0))
    vals = tl.flip(vals, 1)
    cols = pid_n * BLOCK_N + k
    tl.store(Y + rows * N + cols, vals, mask=(rows < M) & (cols < N))


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=1, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.num_warps = BLOCK_M, BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        grid = (triton.cdiv(M, self.BLOCK_M), triton.cdiv(N, self.BLOCK_N))
        _flip_cols_vec_kernel[grid](x, y, M, N, BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                    num_warps=self.num_warps)
        return y
