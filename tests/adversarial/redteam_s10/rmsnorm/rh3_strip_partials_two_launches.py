"""HONEST, rmsnorm_residual (bfloat16), in a style unlike the ladder's row programs: the row is cut
into strips of 512; kernel 1 (one program per row and strip) writes the strip's float32 sum of
h^2 (h = x + residual in float32) to a workspace (M, S); kernel 2 (one program per row and strip)
adds the row's S partials in order, takes rsqrt(mean + 1e-6), recomputes its strip's h and writes
h * rstd * weight, rounded once to bfloat16. No atomics (bitwise deterministic)."""
import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def strip_sumsq_kernel(x, r, ws, N, S, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1)
    c = j * BN + tl.arange(0, BN)
    h = tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32) + \
        tl.load(r + row * N + c, mask=c < N, other=0.0).to(tl.float32)
    tl.store(ws + row * S + j, tl.sum(h * h, axis=0))


@triton.jit
def strip_scale_kernel(x, r, w, ws, y, N, S, eps, BN: tl.constexpr, BS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1)
    k = tl.arange(0, BS)
    acc = tl.zeros([BS], tl.float32)
    for s in range(0, S, BS):
        acc += tl.load(ws + row * S + s + k, mask=s + k < S, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    c = j * BN + tl.arange(0, BN)
    h = tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32) + \
        tl.load(r + row * N + c, mask=c < N, other=0.0).to(tl.float32)
    ww = tl.load(w + c, mask=c < N, other=0.0).to(tl.float32)
    tl.store(y + row * N + c, (h * rstd * ww).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        w = self.weight if self.weight.dtype == x.dtype else self.weight.to(x.dtype)
        BN = 512
        S = triton.cdiv(N, BN)
        ws = torch.empty((M, S), dtype=torch.float32, device=x.device)
        strip_sumsq_kernel[(M, S)](x, residual, ws, N, S, BN=BN)
        strip_scale_kernel[(M, S)](x, residual, w, ws, y, N, S, EPS, BN=BN, BS=64)
        return y
