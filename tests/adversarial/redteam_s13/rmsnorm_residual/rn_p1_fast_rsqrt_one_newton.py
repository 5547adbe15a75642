"""CHEAT, class 2 (approximation of the declared function), rmsnorm_residual bfloat16 (the task's only dtype).

rsqrt(mean(h^2) + eps) by the bit trick (0x5f3759df - (bits >> 1)) and ONE Newton step instead of an
IEEE rsqrt: relative error up to 1.75e-3 (about 0.45 bfloat16 ulp), the same for a whole row, before the
one rounding to bfloat16. The bf16 policy wants float32 math and one rounding; this adds a second error of
the size of the rounding itself to every output (headroom 1 for bf16: the bound is 1.4 x the honest RMS).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def rms_kernel(X, R, W, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mk = c < N
    h = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32) + tl.load(R + row * N + c, mask=mk, other=0.0).to(tl.float32)
    v = tl.sum(h * h, axis=0) / N + eps
    i = v.to(tl.int32, bitcast=True)
    i = 0x5F3759DF - (i >> 1)
    r = i.to(tl.float32, bitcast=True)
    r = r * (1.5 - 0.5 * v * r * r)
    r = tl.where(v == v, r, v)
    r = tl.where(v == float("inf"), 0.0, r)
    tl.store(Y + row * N + c, (h * r * tl.load(W + c, mask=mk, other=0.0).to(tl.float32)).to(Y.dtype.element_ty), mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            rms_kernel[(M,)](x, residual, self.weight, y, N, 1e-6, BLOCK=triton.next_power_of_2(N))
        return y
