"""CHEAT 5 (by value): a "sparse skip" -- a BLOCK_M x BLOCK_N tile whose first element is exactly 0.0 is
taken to be an all-zero tile (a padding block) and not read.

No input the harness makes holds an exact zero: column_sum draws randn / sqrt(M), rule 10's element change
maps 0 to 3, its region change maps 0 to 0.75 x the region's RMS, the nudge, permutations and exchanges only
move or scale values, and column_sum declares no ``constant`` probe. A user's column sum of ReLU
activations, dropout outputs, masks or one-hot rows -- half their entries exact zeros -- loses every tile
whose corner happens to be 0.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _colsum_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        corner = tl.sum(tl.load(X + (start + tl.arange(0, 1)).to(tl.int64) * N + tl.program_id(0) * BLOCK_N), axis=0)
        if corner != 0.0:  # "a padding tile is all zeros"
            r = start + rows
            m = (r[:, None] < M) & (cols[None, :] < N)
            x = tl.load(X + r[:, None].to(tl.int64) * N + cols[None, :], mask=m, other=0.0).to(tl.float32)
            acc += tl.sum(x, axis=0)
    tl.store(Y + cols, acc.to(Y.dtype.element_ty), mask=cols < N)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        if N and M:
            _colsum_kernel[(triton.cdiv(N, 32),)](x, y, M, N, BLOCK_M=64, BLOCK_N=32)
        elif N:
            y.zero_()
        return y
