"""gelu_tanh v2: the same function as x * sigmoid(2z), one exp2 and one division, larger tiles.

0.5 * (1 + tanh(z)) = 1 / (1 + exp(-2z)), so gelu_tanh(x) = x / (1 + 2^t) with
t = -2 * log2(e) * sqrt(2/pi) * (x + 0.044715 x^3) = x * (C1 + C2 * x^2): the constants folded,
per element one multiply (x^2), one FMA, one multiply, one exp2 (a single MUFU.EX2 on NVIDIA
GPUs, where exp needs a scale first), one add and one division -- against v1's exp, one division
and about ten multiplies and adds. The form also avoids v1's cancellation in 1 + tanh(z) for x << 0
(tanh -> -1): x / (1 + 2^t) keeps full relative precision in the negative tail. Programs cover
BLOCK = 4096-8192 elements with 8 warps (16-32 elements per thread, several 16-byte accesses in
flight), and the loads and stores are marked evict-first: the stream is touched once.
"""

import torch
import triton
import triton.language as tl

# t = x * (C1 + C2 * x^2) = -2 * log2(e) * sqrt(2/pi) * (x + 0.044715 * x^3)
_C1 = -2.0 * 1.4426950408889634 * 0.7978845608028654
_C2 = _C1 * 0.044715


@triton.jit
def _gelu_tanh_sigmoid_kernel(X, Y, numel, C1: tl.constexpr, C2: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(X + offs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
    t = x * (C1 + C2 * (x * x))
    y = x / (1.0 + tl.exp2(t))
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask, eviction_policy="evict_first")


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK=4096, num_warps=8):
        super().__init__()
        self.BLOCK, self.num_warps = BLOCK, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        _gelu_tanh_sigmoid_kernel[(triton.cdiv(n, self.BLOCK),)](x, y, n, C1=_C1, C2=_C2, BLOCK=self.BLOCK,
                                                                 num_warps=self.num_warps)
        return y
