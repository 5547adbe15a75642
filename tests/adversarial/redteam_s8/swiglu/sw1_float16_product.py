"""CHEAT, range (no probe declared), swiglu (never attacked; bfloat16, policy bf16). silu(a) and the
product silu(a) * b are formed in float16 (the "half2" path: float16 has 3 more mantissa bits than
bfloat16, so every error statistic of rule 23 looks *better* than one bfloat16 rounding), then
stored as bfloat16. float16's range ends at 65504: an output above it (|silu(a) * b| > 65504, e.g.
a = b = 300: the "massive activations" of large language models' MLPs reach thousands) becomes inf,
where bfloat16 (range 3e38) holds it. Inputs are standard normal and swiglu's spec declares no
probe (rule 24 has no default). Targets rule 24."""
import torch
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(a, b, y, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    m = i < n
    av = tl.load(a + i, mask=m, other=0.0).to(tl.float32)
    bv = tl.load(b + i, mask=m, other=0.0).to(tl.float16)
    s = (av / (1.0 + tl.exp(-av))).to(tl.float16)
    tl.store(y + i, (s * bv).to(tl.float32).to(y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        y = torch.empty_like(a)
        n = a.numel()
        if n:
            swiglu_kernel[(triton.cdiv(n, 1024),)](a, b, y, n, B=1024)
        return y
