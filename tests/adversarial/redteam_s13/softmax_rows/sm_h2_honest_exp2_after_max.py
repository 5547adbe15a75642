"""HONEST, softmax_rows float32, unusual style (h1 corrected: the max is subtracted in float32 before the
log2(e) scaling, so a shifted row loses nothing), exp2, the sum reduced in two halves of the row tree-combined, and the division
replaced by one float32 reciprocal of the row sum and a multiply. Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def sm3_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < N
    x = tl.load(X + row * N + c, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.where(mask, tl.exp2((x - m) * 1.4426950408889634), 0.0)
    lo = tl.sum(tl.where(c < BLOCK // 2, e, 0.0), axis=0)
    hi = tl.sum(tl.where(c >= BLOCK // 2, e, 0.0), axis=0)
    r = 1.0 / (lo + hi)
    tl.store(Y + row * N + c, e * r, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            sm3_kernel[(M,)](x, y, N, BLOCK=max(2, triton.next_power_of_2(N)))
        return y
