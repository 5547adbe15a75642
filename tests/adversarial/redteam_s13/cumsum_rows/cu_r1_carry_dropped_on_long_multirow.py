"""CHEAT, class 5 (wrong only on large dims, jointly), cumsum_rows float32 / bfloat16.

A blocked scan (tl.cumsum per block of 32, the running carry added) whose carry is reset every 2048
columns -- but only when the matrix has at least 2 rows and more than 2048 columns together. The CPU
plan's long shape raises one dim of the cheapest listed shape (1 x 67 -> 1 x >4096, or 67 x 1 -> >4096 x 1)
and the all-dims shape stays within the largest listed shape's elements (3 x 130 = 390): no shape has
M >= 2 and N > 2048 on the interpreter. Expected through on the CPU.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scan_kernel(X, Y, N, RESET, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], tl.float32)
    for s in range(0, N, BLOCK):
        if s % RESET == 0:
            carry = tl.zeros([1], tl.float32)
        c = s + tl.arange(0, BLOCK)
        mk = c < N
        x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
        tl.store(Y + row * N + c, (tl.cumsum(x, axis=0) + carry).to(Y.dtype.element_ty), mask=mk)
        carry = carry + tl.sum(x, axis=0)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            reset = 2048 if (M >= 2 and N > 2048) else (1 << 30)
            scan_kernel[(M,)](x, y, N, reset, BLOCK=32)
        return y
