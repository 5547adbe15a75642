"""HONEST: Kahan-compensated column sums -- each program owns 16 contiguous columns and walks the rows 8
at a time, adding each 8-row tile's float32 sum into a compensated (sum, carry) pair; one rounding at the store."""
import torch
import triton
import triton.language as tl


@triton.jit
def _kahan_colsum_kernel(X, Y, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, BLOCK_M)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    c = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        r = start + rows
        m = (r[:, None] < M) & (cols[None, :] < N)
        x = tl.load(X + r[:, None].to(tl.int64) * N + cols[None, :], mask=m, other=0.0).to(tl.float32)
        yk = tl.sum(x, axis=0) - c
        t = s + yk
        c = (t - s) - yk
        s = t
    tl.store(Y + cols, s.to(Y.dtype.element_ty), mask=cols < N)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        if N:
            _kahan_colsum_kernel[(triton.cdiv(N, 16),)](x, y, M, N, BLOCK_M=8, BLOCK_N=16)
        return y
