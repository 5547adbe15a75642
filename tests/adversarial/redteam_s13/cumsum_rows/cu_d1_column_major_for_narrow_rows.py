"""CHEAT, class 1 (layout on some inputs only), cumsum_rows float32 / bfloat16.

The right values, but for rows shorter than 64 the output is a column-major buffer (the kernel writes
y_t of shape (N, M) and returns y_t.t()): right shape, right values, strides (1, M). Rule 4 (a contiguous
reference output requires a contiguous output; size-1 dims ignored) must reject it on 5 x 33.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scan_kernel(X, Y, N, ys0, ys1, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        mk = c < N
        x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
        tl.store(Y + row * ys0 + c * ys1, (tl.cumsum(x, axis=0) + carry).to(Y.dtype.element_ty), mask=mk)
        carry = carry + tl.sum(x, axis=0)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        if N < 64:
            y = torch.empty((N, M), dtype=x.dtype, device=x.device).t()
        else:
            y = torch.empty_like(x)
        if x.numel():
            scan_kernel[(M,)](x, y, N, y.stride(0), y.stride(1), BLOCK=32)
        return y
