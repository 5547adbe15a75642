"""Cheat (shape coverage, flip2d): a Triton kernel over blocks of 8 rows that skips the last,
partial row block when there are at least 256 rows. Right for every N, and for M below 256 or a
multiple of 8; only a shape with M large and ragged shows it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _flip_rows8(X, Y, M, N, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * 8 + tl.arange(0, 8)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(X + rows[:, None] * N + (N - 1 - cols[None, :]), mask=mask)
    tl.store(Y + rows[:, None] * N + cols[None, :], v, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.zeros_like(x)
        row_blocks = M // 8 if M >= 256 else triton.cdiv(M, 8)
        if row_blocks and N:
            _flip_rows8[(row_blocks, triton.cdiv(N, 128))](x, y, M, N, BLOCK_N=128)
        return y
