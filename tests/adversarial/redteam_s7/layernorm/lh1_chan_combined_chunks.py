"""HONEST (layernorm, float32 and bfloat16). Four rows per program; each row's mean and M2 are built
from 512-wide chunks combined with Chan, Golub and LeVeque's pairwise update (count, mean, M2) -- a
numerically stable one-read statistics pass, then one read + write for the affine output. Unlike the
ladder (three passes, whole row in registers, persistent rows). Must be accepted."""
import hashlib
import torch
import triton
import triton.language as tl

_PREPARED = {}


@triton.jit
def ln_kernel(x, w, b, y, M, N, eps, ONEPASS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    rm = r < M
    base = r.to(tl.int64) * N
    # Chan et al.'s pairwise combination of chunk statistics (count, mean, M2)
    cnt = tl.zeros([BM], dtype=tl.float32)
    mean = tl.zeros([BM], dtype=tl.float32)
    m2 = tl.zeros([BM], dtype=tl.float32)
    s1 = tl.zeros([BM], dtype=tl.float32)
    s2 = tl.zeros([BM], dtype=tl.float32)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        msk = rm[:, None] & (c[None, :] < N)
        v = tl.load(x + base[:, None] + c[None, :], mask=msk, other=0.0).to(tl.float32)
        if ONEPASS:
            s1 += tl.sum(v, axis=1)
            s2 += tl.sum(v * v, axis=1)
        else:
            nb = tl.sum(msk.to(tl.float32), axis=1)
            mb = tl.sum(v, axis=1) / tl.maximum(nb, 1.0)
            d = tl.where(msk, v - mb[:, None], 0.0)
            m2b = tl.sum(d * d, axis=1)
            tot = cnt + nb
            delta = mb - mean
            frac = nb / tl.maximum(tot, 1.0)
            mean = mean + delta * frac
            m2 = m2 + m2b + delta * delta * cnt * frac
            cnt = tot
    if ONEPASS:
        mean = s1 / N
        var = s2 / N - mean * mean
    else:
        var = m2 / N
    rstd = 1.0 / tl.sqrt(tl.maximum(var, 0.0) + eps)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        cm = c < N
        msk = rm[:, None] & cm[None, :]
        v = tl.load(x + base[:, None] + c[None, :], mask=msk, other=0.0).to(tl.float32)
        wv = tl.load(w + c, mask=cm, other=0.0).to(tl.float32)
        bv = tl.load(b + c, mask=cm, other=0.0).to(tl.float32)
        o = (v - mean[:, None]) * rstd[:, None] * wv[None, :] + bv[None, :]
        tl.store(y + base[:, None] + c[None, :], o.to(y.dtype.element_ty), mask=msk)


def layer_norm(x, w, b, onepass):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if x.numel():
        ln_kernel[(triton.cdiv(M, 4),)](x, w, b, y, M, N, 1e-5, ONEPASS=onepass, BM=4, BN=512)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        return layer_norm(x, self.weight.detach().contiguous(), self.bias.detach().contiguous(), False)
