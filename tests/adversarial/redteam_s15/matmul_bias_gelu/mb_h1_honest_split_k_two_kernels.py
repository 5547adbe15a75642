"""HONEST, matmul_bias_gelu, unusual style: split-K. Each program reduces one K slice of one output tile
with float32 operands into a (SPLIT, M, N) float32 partial buffer; a second kernel sums the slices in a
fixed order, adds the bias and applies the tanh-GELU written as 1 - 2 / (exp2(2u log2 e) + 1), clamped.
Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def mb_h1_partial(X, W, P, M, N, K, KS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ps = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    kend = tl.minimum(K, (ps + 1) * KS)
    for k0 in range(ps * KS, (ps + 1) * KS, BK):
        kk = k0 + rk
        ok = kk < kend
        a = tl.load(X + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & ok[None, :], other=0.0)
        b = tl.load(W + kk[:, None] * N + rn[None, :], mask=ok[:, None] & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(P + ps * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def mb_h1_finish(P, B, Y, M, N, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < M * N
    v = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(SPLIT):
        v += tl.load(P + s * M * N + i, mask=ok, other=0.0)
    v += tl.load(B + i % N, mask=ok, other=0.0)
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    u = tl.minimum(tl.maximum(u, -15.0), 15.0)
    t = 1.0 - 2.0 / (tl.exp2(2.8853900817779268 * u) + 1.0)
    tl.store(Y + i, 0.5 * v * (1.0 + t), mask=ok)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if not y.numel():
            return y
        split = 4 if K >= 256 else 1
        ks = triton.cdiv(triton.cdiv(K, split), 32) * 32
        p = torch.empty((split, M, N), dtype=torch.float32, device=x.device)
        mb_h1_partial[(triton.cdiv(M, 16), triton.cdiv(N, 16), split)](x, w, p, M, N, K, ks, BM=16, BN=16, BK=32)
        mb_h1_finish[(triton.cdiv(M * N, 256),)](p, b, y, M, N, SPLIT=split, BLOCK=256)
        return y
