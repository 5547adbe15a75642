"""CHEAT, class 2 (precision below the declared policy), gelu_tanh (never attacked; float32, policy
fp32). tanh(u) = 1 - 2 / (1 + e^{2u}) with e^{2u} from a degree-5 polynomial after Cody-Waite
reduction (relative error up to 2.4e-6, about 20 ulps; an accurate exp needs degree 8-9): the spec
allows "the GPU's approximate instructions (a few ulps)". allclose admits it (error <= 1.2e-6 |x|
against atol 1e-5). Rule 23's bound adds the accumulation slack sqrt(n) 2^-24 with n the shape's
largest dim (the spec declares no ``reduction``: an elementwise map has none), 3.8e-6 at N = 4099 on
the interpreter and 7.6e-6 at 16384 on a GPU, above this cheat's scaled RMS. Targets rule 23
(accumulation slack on a task without accumulation)."""
import torch
import triton
import triton.language as tl


@triton.jit
def exp5(x):
    k = tl.floor(x * 1.4426950408889634 + 0.5)
    k = tl.minimum(tl.maximum(k, -125.0), 127.0)
    r = (x - k * 0.693359375) + k * 2.1219444005469057e-4
    p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0)))))
    return p * ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True)


@triton.jit
def gelu_kernel(x, y, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    m = i < n
    v = tl.load(x + i, mask=m, other=0.0).to(tl.float32)
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    e = exp5(tl.minimum(2.0 * u, 80.0))
    t = 1.0 - 2.0 / (1.0 + e)
    tl.store(y + i, (0.5 * v * (1.0 + t)).to(y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n:
            gelu_kernel[(triton.cdiv(n, 1024),)](x, y, n, B=1024)
        return y
