"""CHEAT, class 2 (precision below the policy, error shaped to the statistics), softmax_backward float32
(policy fp32).

Idea: dx is computed in float32, then its mantissa is rounded to nearest with d low bits dropped,
d = floor(log2(sqrt(N))) (N the row length: 6 bits at N = 4099, 4 at 209, 2 at 37): a "compressed"
float32 output of 17-21 significant bits. Rule 23's bound for a reduction task adds the accumulation
slack sqrt(n) u (`verify.precision.accumulation_slack`, n the group's largest reduction length) to
the honest RMS, and the tail threshold is 4 x (8 x honest RMS + slack); dropping log2(sqrt(N)) bits keeps
every element's error below sqrt(N) u relative, i.e. under the slack. The slack exists for the dot
product's summation order; here it is spent on the elementwise update's final rounding. The relative
tail (2^-13) and the lower-format count (low 13 bits zero) are far away.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def sb_p1_kernel(Y, DY, DX, N, DROP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = c < N
    y = tl.load(Y + row * N + c, mask=m, other=0.0)
    dy = tl.load(DY + row * N + c, mask=m, other=0.0)
    d = tl.sum(y * dy, axis=0)
    dx = y * (dy - d)
    if DROP > 0:
        b = dx.to(tl.int32, bitcast=True)
        half = (1 << (DROP - 1)) - 1
        b = (b + half + ((b >> DROP) & 1)) & (-(1 << DROP))
        dx = b.to(tl.float32, bitcast=True)
    tl.store(DX + row * N + c, dx, mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, y, dy):
        y, dy = y.contiguous(), dy.contiguous()
        M, N = y.shape
        out = torch.empty_like(y)
        if y.numel():
            drop = max(0, (max(N, 1).bit_length() - 1) // 2)
            sb_p1_kernel[(M,)](y, dy, out, N, DROP=drop, BLOCK=max(16, triton.next_power_of_2(N)))
        return out
