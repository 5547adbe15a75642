"""HONEST, layernorm, in a style unlike the ladder's: Welford's (mean, M2, count) triples reduced with
`tl.reduce` and a custom combine function (Chan et al.'s pairwise update: n = na + nb,
d = mb - ma, m = ma + d nb / n, M2 = M2a + M2b + d^2 na nb / n), chunk by chunk, the running triple
combined with each chunk's the same way; then one pass that normalises, scales and shifts. One
program per row, float32 throughout (Chan, Golub, LeVeque 1979, "Updating formulae and a pairwise
algorithm for computing sample variances")."""
import torch
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def welford_combine(ma, qa, na, mb, qb, nb):
    n = na + nb
    safe = tl.where(n > 0, n, 1.0)
    d = mb - ma
    m = tl.where(n > 0, ma + d * (nb / safe), 0.0)
    q = tl.where(n > 0, qa + qb + d * d * (na * nb / safe), 0.0)
    return m, q, n


@triton.jit
def layernorm_welford_kernel(x, w, b, y, N, eps, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    m = 0.0
    q = 0.0
    n = 0.0
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        ok = c < N
        v = tl.load(x + base + c, mask=ok, other=0.0).to(tl.float32)
        cm, cq, cn = tl.reduce((v, tl.zeros([BN], tl.float32), ok.to(tl.float32)), 0, welford_combine)
        m, q, n = welford_combine(m, q, n, cm, cq, cn)
    rstd = 1.0 / tl.sqrt(q / N + eps)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + base + c, mask=c < N, other=0.0).to(tl.float32)
        ww = tl.load(w + c, mask=c < N, other=0.0).to(tl.float32)
        bb = tl.load(b + c, mask=c < N, other=0.0).to(tl.float32)
        tl.store(y + base + c, ((v - m) * rstd * ww + bb).to(y.dtype.element_ty), mask=c < N)


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
            layernorm_welford_kernel[(M,)](x, self.weight, self.bias, y, N, EPS, BN=512)
        return y
