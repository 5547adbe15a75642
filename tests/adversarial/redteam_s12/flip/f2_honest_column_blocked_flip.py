"""HONEST, flip2d, unusual style: 2-D tiles over (row, column) with the column index mirrored in the
tile's address computation, masked on both edges. Should be accepted (rules 1-24)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_tile_kernel(X, Y, R, N, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.program_id(1) * BC + tl.arange(0, BC)[None, :]
    m = (r < R) & (c < N)
    v = tl.load(X + r.to(tl.int64) * N + (N - 1 - c), mask=m)
    tl.store(Y + r.to(tl.int64) * N + c, v, mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        N = x.shape[-1]
        y = torch.empty_like(x)
        if y.numel() == 0:
            return y
        R = x.numel() // N
        flip_tile_kernel[(triton.cdiv(R, 16), triton.cdiv(N, 64))](x, y, R, N, BR=16, BC=64)
        return y
