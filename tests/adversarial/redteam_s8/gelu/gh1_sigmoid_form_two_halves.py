"""HONEST, gelu_tanh. Written as x * sigmoid(2u) = x / (1 + exp(-2u)) (no tanh, no cancellation in
the negative tail: exp(-2u) grows there and the quotient stays accurate), float32 math, one rounding
at the store. Each program handles two half-blocks from opposite ends of the flat tensor (a
different traversal from the ladder's). Must be accepted."""
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x, y, n, HALF: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    j = tl.arange(0, HALF)
    lo = pid * HALF + j
    hi = n - 1 - (pid * HALF + j)
    for side in tl.static_range(2):
        i = lo if side == 0 else hi
        m = (i >= 0) & (i < n) & ((pid * HALF + j) < (n + 1) // 2)
        if side == 1:
            m = m & (hi != lo)
        v = tl.load(x + i, mask=m, other=0.0).to(tl.float32)
        u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
        o = v / (1.0 + tl.exp(-2.0 * u))
        tl.store(y + i, o.to(y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n:
            gelu_kernel[(triton.cdiv((n + 1) // 2, 512),)](x, y, n, HALF=512)
        return y
