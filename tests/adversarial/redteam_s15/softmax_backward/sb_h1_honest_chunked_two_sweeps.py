"""HONEST, softmax_backward float32, unusual style: fixed 128-wide chunks, the row dot accumulated as a
(128,) vector of per-lane partial sums over the chunks (reduced once at the end), then a second sweep for
the update dx = y dy - y d (two products, not y (dy - d)). Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def sb_h1_kernel(Y, DY, DX, N, CH: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, CH)
    part = tl.zeros([CH], dtype=tl.float32)
    for s in range(0, N, CH):
        m = s + c < N
        part += tl.load(Y + row * N + s + c, mask=m, other=0.0) * tl.load(DY + row * N + s + c, mask=m, other=0.0)
    d = tl.sum(part, axis=0)
    for s in range(0, N, CH):
        m = s + c < N
        y = tl.load(Y + row * N + s + c, mask=m, other=0.0)
        dy = tl.load(DY + row * N + s + c, mask=m, other=0.0)
        tl.store(DX + row * N + s + c, y * dy - y * d, mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, y, dy):
        y, dy = y.contiguous(), dy.contiguous()
        M, N = y.shape
        out = torch.empty_like(y)
        if y.numel():
            sb_h1_kernel[(M,)](y, dy, out, N, CH=128)
        return out
