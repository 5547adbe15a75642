"""HONEST, cumsum_rows float32 / bfloat16, unusual style: a two-level (reduce-then-scan) scan across
programs: kernel 1 writes each 64-column block's float32 total, kernel 2 scans those totals per row
sequentially into block offsets, kernel 3 scans each block with tl.cumsum and adds its offset -- many
programs per row, as a GPU scan over long rows would. Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def totals_kernel(X, T, N, NB, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    c = blk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + row * N + c, mask=c < N, other=0.0).to(tl.float32)
    tl.store(T + row * NB + blk, tl.sum(x, axis=0))


@triton.jit
def offsets_kernel(T, O, NB):
    row = tl.program_id(0).to(tl.int64)
    acc = 0.0
    for b in range(0, NB):
        tl.store(O + row * NB + b, acc)
        acc += tl.load(T + row * NB + b)


@triton.jit
def scan_kernel(X, O, Y, N, NB, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    c = blk * BLOCK + tl.arange(0, BLOCK)
    mk = c < N
    x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
    y = tl.cumsum(x, axis=0) + tl.load(O + row * NB + blk)
    tl.store(Y + row * N + c, y.to(Y.dtype.element_ty), mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if not x.numel():
            return y
        B = 64
        NB = triton.cdiv(N, B)
        t = torch.empty((M, NB), dtype=torch.float32, device=x.device)
        o = torch.empty((M, NB), dtype=torch.float32, device=x.device)
        totals_kernel[(M, NB)](x, t, N, NB, BLOCK=B)
        offsets_kernel[(M,)](t, o, NB)
        scan_kernel[(M, NB)](x, o, y, N, NB, BLOCK=B)
        return y
