"""HONEST, rmsnorm_residual bfloat16 (the task's only dtype), unusual style: the row is processed in chunks of 32 with a sum of
squares accumulated per lane across chunks (a strided, not tree, reduction order), the residual sum h
recomputed in the second pass instead of stored, and the normaliser applied as h * (w * r) (the weight
and the row's rstd multiplied first). Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def rms_kernel(X, R, W, Y, N, eps, CH: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([CH], tl.float32)
    for s in range(0, N, CH):
        c = s + tl.arange(0, CH)
        mk = c < N
        h = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32) + tl.load(R + row * N + c, mask=mk, other=0.0).to(tl.float32)
        acc += h * h
    r = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for s in range(0, N, CH):
        c = s + tl.arange(0, CH)
        mk = c < N
        h = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32) + tl.load(R + row * N + c, mask=mk, other=0.0).to(tl.float32)
        tl.store(Y + row * N + c, (h * (tl.load(W + c, mask=mk, other=0.0).to(tl.float32) * r)).to(Y.dtype.element_ty), mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            rms_kernel[(M,)](x, residual, self.weight, y, N, 1e-6, CH=32)
        return y
