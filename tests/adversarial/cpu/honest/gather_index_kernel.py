"""Honest, not ours: a Triton gather -- the column permutation is an index tensor in memory
(idx[j] = N - 1 - j), loaded and followed; 1D tiles over columns, one program per row."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gather_cols(X, IDX, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    src = tl.load(IDX + cols, mask=mask, other=0)
    tl.store(Y + row * N + cols, tl.load(X + row * N + src, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK=64, **kw):
        super().__init__()
        self.BLOCK = BLOCK

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        idx = torch.arange(N - 1, -1, -1, device=x.device, dtype=torch.int32)
        y = torch.empty_like(x)
        _gather_cols[(M, triton.cdiv(N, self.BLOCK))](x, idx, y, N, BLOCK=self.BLOCK)
        return y
