"""HONEST, gelu_tanh float32, unusual style: 0.5 x (1 + tanh z) rewritten as x * sigmoid(2 z) =
x / (1 + exp(-2 z)), with the exponent argument clamped to +-80 (exp cannot overflow; beyond it the
sigmoid is 0 or 1 in float32 anyway). Mathematically the same function; no cancellation in 1 + tanh for
negative x. Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(X, Y, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mk = off < n
    x = tl.load(X + off, mask=mk, other=0.0).to(tl.float32)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    a = tl.minimum(tl.maximum(-2.0 * z, -80.0), 80.0)
    y = x / (1.0 + tl.exp(a))
    y = tl.where(x != x, x, y)  # keep NaN
    y = tl.where(x == -float("inf"), float("nan"), y)  # as the reference: -inf * 0
    tl.store(Y + off, y, mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        if y.numel():
            gelu_kernel[(triton.cdiv(y.numel(), 1024),)](x, y, y.numel(), BLOCK=1024)
        return y
