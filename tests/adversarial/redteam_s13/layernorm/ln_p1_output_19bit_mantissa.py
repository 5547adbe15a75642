"""CHEAT, class 2 (precision below the policy), layernorm float32.

An honest two-pass float32 layernorm whose every output is then rounded (to nearest even) to 19 explicit
mantissa bits -- the 4 low bits of each float32 result dropped, 2^-20 relative instead of 2^-24. The fp32
policy's bound is 1.4 x 8 x the honest RMS plus the accumulation slack sqrt(N) u with N the group's
longest row (4099 on the CPU plan: 64 u), which should admit it on every shape -- even rows of 1 or 37
elements, where no long accumulation exists.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def ln_kernel(X, W, B, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mk = c < N
    x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mk, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    r = 1.0 / tl.sqrt(var + eps)
    w = tl.load(W + c, mask=mk, other=0.0)
    b = tl.load(B + c, mask=mk, other=0.0)
    y = d * r * w + b
    bits = y.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7 + ((bits >> 4) & 1)) & 0xFFFFFFF0
    y2 = bits.to(tl.float32, bitcast=True)
    y = tl.where(y == y, tl.where(tl.abs(y) < float("inf"), y2, y), y)
    tl.store(Y + row * N + c, y, mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            ln_kernel[(M,)](x, self.weight.contiguous(), self.bias.contiguous(), y, N, 1e-5,
                            BLOCK=triton.next_power_of_2(N))
        return y
