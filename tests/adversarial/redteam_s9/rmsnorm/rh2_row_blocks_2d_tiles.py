"""HONEST, rmsnorm_residual, 2D-tile style: each program takes BM = 4 rows at once and walks the
columns in (4, 256) tiles, the sum of squares kept per row in a float32 vector of the tile's rows,
h recomputed in the second pass (no workspace), the weight read once per tile for all four rows."""
import torch
import triton
import triton.language as tl


@triton.jit
def rms_rows_kernel(x, r, w, y, M, N, eps, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    rm = rows < M
    base = rows.to(tl.int64)[:, None] * N
    acc = tl.zeros([BM, BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        m = rm[:, None] & (c[None, :] < N)
        h = tl.load(x + base + c[None, :], mask=m, other=0.0).to(tl.float32) + \
            tl.load(r + base + c[None, :], mask=m, other=0.0).to(tl.float32)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        m = rm[:, None] & (c[None, :] < N)
        h = tl.load(x + base + c[None, :], mask=m, other=0.0).to(tl.float32) + \
            tl.load(r + base + c[None, :], mask=m, other=0.0).to(tl.float32)
        g = tl.load(w + c, mask=c < N, other=0.0).to(tl.float32)
        tl.store(y + base + c[None, :], (h * rstd[:, None] * g[None, :]).to(y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            rms_rows_kernel[(triton.cdiv(M, 4),)](x, residual, self.weight, y, M, N, 1e-6, BM=4, BN=256)
        return y
