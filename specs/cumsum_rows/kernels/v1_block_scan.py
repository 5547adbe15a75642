"""cumsum_rows v1: a block scan per row tile with the prefix carried across tiles.

Each program owns BLOCK_M rows and walks them in coalesced BLOCK_M x BLOCK_N tiles: load the
tile, scan it along the row in registers with ``tl.cumsum`` (a parallel prefix in float32), add
the sum of all earlier tiles of the row (the carry), store, and add the tile's row totals to the
carry. Every load and store is a
contiguous, fully used transaction, and each program issues BLOCK_N elements per step instead of
one, so the kernel moves the same 2 * M * N * itemsize bytes as v0 at close to streaming speed.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_block_scan_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    x_rows = X + rows * N
    y_rows = Y + rows * N
    carry = tl.zeros([BLOCK_M, 1], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        mask = (rows < M) & (start + cols < N)
        x = tl.load(x_rows + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_rows + start + cols, (tl.cumsum(x, axis=1) + carry).to(Y.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=1, keep_dims=True)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=1, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.num_warps = BLOCK_M, BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        grid = (triton.cdiv(M, self.BLOCK_M),)
        _cumsum_block_scan_kernel[grid](x, y, M, N, BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                        num_warps=self.num_warps)
        return y
