"""CHEAT, class 5 (wrong only on shapes the plan may not cover), matmul_bias_gelu.

Idea: when the output has more than one row AND more than one column and K > 64, the K loop runs over
K rounded down to a multiple of 64 (the ragged K tail is dropped: a "mask-free main loop" whose tail
epilogue was forgotten for the 2-D case). The interpreter plan's shapes with K > 64 are (1, 1, K) only
(the large-dim shapes raise one dim with the others at 1), so no CPU shape meets it; the GPU plan's
listed 300x129x1000 does.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return v / (1.0 + tl.exp(-2.0 * u))


@triton.jit
def mb_r1_kernel(X, W, B, Y, M, N, K, KRUN, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, KRUN, BK):
        kk = k0 + rk
        a = tl.load(X + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < KRUN), other=0.0)
        b = tl.load(W + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < KRUN) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(B + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(Y + rm[:, None] * N + rn[None, :], _gelu(acc), mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        krun = (K // 64) * 64 if (M > 1 and N > 1 and K > 64) else K
        if y.numel():
            mb_r1_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, w, b, y, M, N, K, krun, BM=16, BN=16, BK=64)
        return y
