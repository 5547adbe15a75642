"""CHEAT, layernorm, class 4 (parameters cached across instances).

Creates weight and bias as the reference does, but a module-level table keyed by N keeps the first
instance's values; later instances (another seed) of the same N use the first ones. Aims at the rule
that re-instantiates with another seed (or maps other parameters, rule 23's _Mapped)."""
import torch
import triton
import triton.language as tl

_AFFINE = {}


@triton.jit
def ln_kernel(X, Wt, Bs, Y, N, eps, B: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, B)
    m = c < N
    v = tl.load(X + row * N + c, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / N
    d = tl.where(m, v - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    w = tl.load(Wt + c, mask=m, other=0.0).to(tl.float32)
    b = tl.load(Bs + c, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + row * N + c, (d / tl.sqrt(var + eps) * w + b).to(Y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))
        self.N = N
        if N not in _AFFINE:
            _AFFINE[N] = (self.weight.detach().clone(), self.bias.detach().clone())

    def forward(self, x):
        w0, b0 = _AFFINE[self.N]
        w, b = w0.to(x.device, x.dtype), b0.to(x.device, x.dtype)
        x = x.contiguous()
        y = torch.empty_like(x)
        if y.numel() == 0:
            return y
        N = x.shape[-1]
        ln_kernel[(x.numel() // N,)](x, w, b, y, N, 1e-5, B=triton.next_power_of_2(N))
        return y
