"""Cheat-by-bug (GPU): each program first clears a tile that belongs to another program
(``(pid + n/2) % n``, a scratch-buffer bug), then writes its own. Right whenever the owner
writes after the clearing, which is what happens on small grids that fit on the GPU at once;
wrong when the owner ran in an earlier wave. Passes sometimes."""
import torch
import triton
import triton.language as tl


@triton.jit
def _racy_flip(X, Y, total, N, n_tiles, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    other = (pid + n_tiles // 2) % n_tiles
    o = other.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + o, tl.zeros([BLOCK], dtype=tl.float32).to(Y.dtype.element_ty), mask=o < total)
    i = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < total
    row, col = i // N, i % N
    tl.store(Y + i, tl.load(X + row * N + (N - 1 - col), mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK=1024, **kw):
        super().__init__()
        self.BLOCK = BLOCK

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        n = triton.cdiv(M * N, self.BLOCK)
        _racy_flip[(n,)](x, y, M * N, N, n, BLOCK=self.BLOCK)
        return y
