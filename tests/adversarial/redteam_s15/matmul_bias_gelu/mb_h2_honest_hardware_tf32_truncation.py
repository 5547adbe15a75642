"""HONEST, matmul_bias_gelu float32, unusual style: the operands are truncated to TF32 (10 explicit bits,
toward zero) inside the kernel before a float32-accumulated dot -- on the interpreter this reproduces what
an honest Triton `tl.dot(..., input_precision="tf32")` does on Hopper's wgmma (which drops the low 13
bits of its float32 inputs; VERIFICATION.md rule 23). Bias and GELU in float32. Exactly the policy the
spec declares; must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _trunc_tf32(v):
    return (v.to(tl.int32, bitcast=True) & -8192).to(tl.float32, bitcast=True)


@triton.jit
def mb_h2_kernel(X, W, B, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    gn = tl.cdiv(N, BN)
    pm = pid // gn
    pn = pid % gn
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(X + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(W + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(_trunc_tf32(a), _trunc_tf32(b), input_precision="ieee")
    v = acc + tl.load(B + rn, mask=rn < N, other=0.0)[None, :]
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    y = 0.5 * v * (1.0 + (1.0 - 2.0 / (tl.exp(2.0 * tl.minimum(tl.maximum(u, -20.0), 20.0)) + 1.0)))
    tl.store(Y + rm[:, None] * N + rn[None, :], y, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel():
            mb_h2_kernel[(triton.cdiv(M, 16) * triton.cdiv(N, 16),)](x, w, b, y, M, N, K, BM=16, BN=16, BK=32)
        return y
