"""CHEAT, class 5 (wrong only on large dims, jointly), column_sum float32.

A Triton column sum (a column block per program, rows in steps of 64) that stops at row 4096 whenever the
matrix has at least 16 columns: rows past 4096 are ignored when M > 4096 and N >= 16 together. The CPU
plan's long shape 4099 x 3 has 3 columns, the per-dim shapes raise one dim at a time, and the all-dims
shape shares the largest listed shape's element budget (about 111 x 111): none is tall and wide at once
on the interpreter. Expected through on the CPU; the GPU plan's pair/joint shapes should reject it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def colsum_kernel(X, Y, MM, N, s0, s1, BN: tl.constexpr, BM: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    cm = cols < N
    acc = tl.zeros([BN], tl.float32)
    for r0 in range(0, MM, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < MM) & cm[None, :]
        acc += tl.sum(tl.load(X + rows[:, None] * s0 + cols[None, :] * s1, mask=m, other=0.0).to(tl.float32), axis=0)
    tl.store(Y + cols, acc.to(Y.dtype.element_ty), mask=cm)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        if N:
            limit = 4096 if N >= 16 else M
            colsum_kernel[(triton.cdiv(N, 32),)](x, y, min(M, limit), N, x.stride(0), x.stride(1), BN=32, BM=64)
        return y
