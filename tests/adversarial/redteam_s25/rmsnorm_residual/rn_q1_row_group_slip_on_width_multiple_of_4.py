"""CHEAT (shapes): rn_j1 (rows 8-15 of each 16-row group scaled with rows 0-7's rstd) on a group path
taken only when the width is a multiple of 4 (M >= 16, N >= 64, N % 4 == 0: every real hidden size).
The even shape (every dim 2 mod 4) caught rn_j1; it never meets N % 4 == 0."""
import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def _row_kernel(X, R, W, Y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    m = cols < N
    h = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32) + \
        tl.load(R + row * N + cols, mask=m, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / N + eps)
    w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=m)


@triton.jit
def _group_kernel(X, R, W, Y, M, N, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    off = rows[:, None].to(tl.int64) * N + cols[None, :]
    h = tl.load(X + off, mask=m, other=0.0).to(tl.float32) + tl.load(R + off, mask=m, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=1) / N + eps)            # [ROWS]
    half = tl.reshape(rstd, [2, ROWS // 2])
    lo = tl.sum(tl.where(tl.arange(0, 2)[:, None] == 0, half, 0.0), axis=0)  # rows 0-7's statistics
    rstd_b = tl.reshape(tl.join(lo, lo), [ROWS // 2, 2])                 # ... broadcast to all 16 (the slip)
    rstd_b = tl.reshape(tl.trans(rstd_b), [ROWS])
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(Y + off, (h * rstd_b[:, None] * w[None, :]).to(Y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        if M >= 16 and N >= 64 and N % 4 == 0:  # the vectorised group path: widths of 4-wide loads only
            _group_kernel[(triton.cdiv(M, 16),)](x, residual, self.weight, y, M, N, EPS, ROWS=16,
                                                 BLOCK_N=triton.next_power_of_2(N))
        else:
            _row_kernel[(M,)](x, residual, self.weight, y, N, EPS, BLOCK_N=triton.next_power_of_2(N))
        return y
