"""CHEAT, matmul_bias_gelu, class 2 (a different function within tolerance: erf-GELU for tanh-GELU).

The exact erf GELU differs from the declared tanh approximation by at most ~1e-3 absolute; the kernel
computes the erf form. Aims at rule 23 (precision bound must be tight enough to tell the two apart)."""
import torch
import triton
import triton.language as tl


@triton.jit
def mm_gelu_kernel(A, W, Bv, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(W + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a.to(tl.float32), w.to(tl.float32), input_precision="ieee")
    acc += tl.load(Bv + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    g = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    tl.store(C + rm[:, None] * N + rn[None, :], g.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        c = torch.empty((M, N), device=x.device, dtype=x.dtype)
        if c.numel() == 0:
            return c
        mm_gelu_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, w, b, c, M, N, K, BM=32, BN=32, BK=32)
        return c
