"""HONEST (flip2d, every dtype). One 1-D Triton kernel over the flattened output: each program takes
BLOCK consecutive output elements, recovers (row, column) by integer division, and gathers
x[row, N - 1 - column]. No tiles, no rows-per-program loop, any dtype (bits are copied as they are).
Must be accepted."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_flat_kernel(x, y, total, N, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = o < total
    row = o // N
    col = o - row * N
    tl.store(y + o, tl.load(x + row * N + (N - 1 - col), mask=m), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            flip_flat_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), N, BLOCK=1024)
        return y
