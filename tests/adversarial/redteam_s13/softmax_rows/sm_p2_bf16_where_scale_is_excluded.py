"""CHEAT, class 2 (precision below the policy on most of the output), softmax_rows float32.

Rule 23 keeps only elements whose rounding scale s = sqrt(softmax(x^2)) is above 2^-30 of the tensor's
largest scale (precision._scaled_errors: "smaller ones are left to the absolute tolerance"). For a softmax,
s_j^2 / s_max^2 = exp(x_j^2 - max x^2), so every entry with x_j^2 < max_row(x^2) - 42.3 is outside the
precision rule -- on a row of 4099 logits 2 * randn, every |x_j| < about 2.8 (over 80 % of the row); under
the shift and scale probes nearly all of it. The candidate computes exactly those entries from a bfloat16
exp (the float32 exponential rounded to bfloat16, 2^-9 relative; the quotient by the float32 row sum is no
bfloat16 number, so the lower-format fraction does not see it; the row sum stays float32). Only entries of probability below 2e-3 are
taken (2^-9 relative of them is inside atol 1e-5). Elsewhere float32.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _bf(v):
    b = v.to(tl.uint32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.to(tl.float32, bitcast=True)


@triton.jit
def sm_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < N
    x = tl.load(X + row * N + c, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    x2 = tl.where(mask, x * x, 0.0)
    m2 = tl.max(x2, axis=0)
    e = tl.where(mask, tl.exp(x - m), 0.0)  # the row sum stays float32 (so the kept entries are exact)
    z = tl.sum(e, axis=0)
    hidden = (x2 < m2 - 42.3) & (e < 2e-3 * z)  # outside rule 23, and small enough for atol
    num = tl.where(hidden, _bf(e), e)
    tl.store(Y + row * N + c, num / z, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            sm_kernel[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
        return y
