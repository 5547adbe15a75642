"""HONEST, layernorm, in a style unlike the ladder's: a streaming Welford update per lane (each of
the BN lanes keeps its own count, mean and M2 while the program walks the row chunk by chunk:
d = v - m; m += d / n; M2 += d (v - m)), then the lanes are combined with Chan's parallel formula
using plain sums (n = sum n_j, mean = sum n_j m_j / n, M2 = sum M2_j + sum n_j (m_j - mean)^2),
and one pass normalises, scales and shifts. One program per row, float32 throughout (Welford 1962;
Chan, Golub, LeVeque 1979, "Updating formulae and a pairwise algorithm for computing sample
variances"). (A first version reduced (mean, M2, n) triples with `tl.reduce` and a custom combine
function: correct, but about 2 minutes per call of 300 x 2053 on the interpreter.)"""
import torch
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def layernorm_lane_welford_kernel(x, w, b, y, N, eps, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    n = tl.zeros([BN], tl.float32)
    m = tl.zeros([BN], tl.float32)
    q = tl.zeros([BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        ok = c < N
        v = tl.load(x + base + c, mask=ok, other=0.0).to(tl.float32)
        n1 = n + ok.to(tl.float32)
        d = v - m
        m = tl.where(ok, m + d / tl.where(ok, n1, 1.0), m)
        q = tl.where(ok, q + d * (v - m), q)
        n = n1
    tot = tl.sum(n, axis=0)
    mean = tl.sum(n * m, axis=0) / tot
    dm = m - mean
    var = (tl.sum(q, axis=0) + tl.sum(n * dm * dm, axis=0)) / tot
    rstd = 1.0 / tl.sqrt(var + eps)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + base + c, mask=c < N, other=0.0).to(tl.float32)
        ww = tl.load(w + c, mask=c < N, other=0.0).to(tl.float32)
        bb = tl.load(b + c, mask=c < N, other=0.0).to(tl.float32)
        tl.store(y + base + c, ((v - mean) * rstd * ww + bb).to(y.dtype.element_ty), mask=c < N)


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
            layernorm_lane_welford_kernel[(M,)](x, self.weight, self.bias, y, N, EPS, BN=256)
        return y
