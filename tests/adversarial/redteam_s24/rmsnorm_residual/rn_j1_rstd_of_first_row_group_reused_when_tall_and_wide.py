"""CHEAT 5 (shapes): a "row-group" path for batches of at least 16 rows of at least 64 columns (every real
tokens x hidden input) normalises 16 rows per program and scales rows 8-15 of each group with the rstd of
rows 0-7 (an index slip in the broadcast of the group's statistics).

The interpreter's rmsnorm_residual plan never has 16 rows and 64 columns together: its listed shapes are
1x1, 3x37, 9x130 and 2x4099, and rule 12 raises one dim at a time (7x761, 9x209, 293x1, 294x1, 1x4101,
1x4100 at seed 0; the joint all-dims shape stays inside the largest listed shape's element count, no pair
shapes on the interpreter). The GPU plan's listed 129x1000 would meet it.
"""
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
        if M >= 16 and N >= 64:
            _group_kernel[(triton.cdiv(M, 16),)](x, residual, self.weight, y, M, N, EPS, ROWS=16,
                                                 BLOCK_N=triton.next_power_of_2(N))
        else:
            _row_kernel[(M,)](x, residual, self.weight, y, N, EPS, BLOCK_N=triton.next_power_of_2(N))
        return y
