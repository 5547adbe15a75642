"""HONEST, column_sum float32, unusual style: split over rows (split-K style) -- each program sums one chunk
of 256 rows of a column block into a float32 partial buffer of shape (chunks, N), a second kernel adds the
partials of each column in chunk order. Both kernels read the input through its strides. Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(X, P, M, N, s0, s1, CH: tl.constexpr, BN: tl.constexpr, BM: tl.constexpr):
    ch = tl.program_id(0)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    cm = cols < N
    acc = tl.zeros([BN], tl.float32)
    for r in range(0, CH, BM):
        rows = ch * CH + r + tl.arange(0, BM)
        m = (rows[:, None] < M) & cm[None, :]
        acc += tl.sum(tl.load(X + rows[:, None] * s0 + cols[None, :] * s1, mask=m, other=0.0).to(tl.float32), axis=0)
    tl.store(P + ch * N + cols, acc, mask=cm)


@triton.jit
def finish_kernel(P, Y, C, N, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    cm = cols < N
    acc = tl.zeros([BN], tl.float32)
    for c in range(0, C):
        acc += tl.load(P + c * N + cols, mask=cm, other=0.0)
    tl.store(Y + cols, acc.to(Y.dtype.element_ty), mask=cm)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        if not N:
            return y
        CH = 256
        C = max(1, triton.cdiv(M, CH))
        p = torch.empty((C, N), dtype=torch.float32, device=x.device)
        partial_kernel[(C, triton.cdiv(N, 32))](x, p, M, N, x.stride(0), x.stride(1), CH=CH, BN=32, BM=64)
        finish_kernel[(triton.cdiv(N, 32),)](p, y, C, N, BN=32)
        return y
