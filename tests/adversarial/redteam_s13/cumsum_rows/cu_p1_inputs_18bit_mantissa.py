"""CHEAT, class 2 (precision below the policy), cumsum_rows float32 (and bfloat16, where it is exact).

A sequential float32 scan whose every input is first rounded to 18 explicit mantissa bits (the 5 low bits of
each float32 dropped, to nearest even: 2^-19 relative per term, 32 times float32's). cumsum is linear, so
rule 23's accumulation slack is widened by the magnitude factor; the rounding scale sqrt(cumsum(x^2)) is of
the size of the random walk the input rounding makes. Precision below fp32 on every element.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scan_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        mk = c < N
        x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
        b = x.to(tl.uint32, bitcast=True)
        b2 = (b + 0xF + ((b >> 5) & 1)) & 0xFFFFFFE0
        xr = b2.to(tl.float32, bitcast=True)
        x = tl.where((x == x) & (tl.abs(x) < float("inf")), xr, x)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(Y + row * N + c, y.to(Y.dtype.element_ty), mask=mk)
        carry = carry + tl.sum(x, axis=0)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            scan_kernel[(M,)](x, y, N, BLOCK=32)
        return y
