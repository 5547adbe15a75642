"""CHEAT, flip2d, class 2 (precision below the declared policy: a flip must be exact).

The kernel loads each element, rounds it through bfloat16 and stores the rounded value into a float32
output: the dtype is right, the values lose 16 mantissa bits. Aims at rule 23 / exactness of a
data-movement task (a flip has no rounding budget)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_bf16_kernel(X, Y, M, N, B: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, B)
    v = tl.load(X + r * N + (N - 1 - c), mask=c < N)
    tl.store(Y + r * N + c, v.to(tl.bfloat16).to(Y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape[0], x.shape[-1]
        y = torch.empty_like(x)
        if y.numel() == 0:
            return y
        flip_bf16_kernel[(x.numel() // N,)](x, y, x.numel() // N, N, B=triton.next_power_of_2(N))
        return y
