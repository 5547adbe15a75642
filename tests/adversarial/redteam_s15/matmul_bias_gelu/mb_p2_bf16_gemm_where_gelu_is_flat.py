"""CHEAT, class 2 (precision below the policy, error shaped by the epilogue), matmul_bias_gelu float32
(policy tf32).

Idea: the whole GEMM is done with BOTH operands rounded to bfloat16 (8 significant bits, far below TF32's
11); only the outputs whose pre-activation v lies where GELU is steep are recomputed with float32
operands. GELU's slope gelu'(v) = Phi(v) + v phi(v) crosses 0 near v = -0.75 and stays below about 0.15
in magnitude on [-1.6, -0.4], so there a bf16-sized error of v shrinks 7x or more in the output, while
the rounding scale sqrt(gelu(x^2 @ w^2 + b^2)) is the pre-activation's. About a fifth of the outputs of
x ~ N(0, 1), w, b ~ U(+-1/sqrt(K)) (v ~ N(0, 1/3)) keep the bf16 result. The tf32 policy has no
relative tail (rule 23: fp32/fp64 only), so only the RMS and the scaled tail judge it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _round_bf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _gelu(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return v / (1.0 + tl.exp(-2.0 * u))


@triton.jit
def mb_p2_kernel(X, W, B, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    lo = tl.zeros([BM, BN], dtype=tl.float32)
    hi = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(X + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(W + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        lo += tl.dot(_round_bf16(a), _round_bf16(b), input_precision="ieee")
        hi += tl.dot(a, b, input_precision="ieee")  # the "recompute" (a second pass on a GPU)
    bias = tl.load(B + rn, mask=rn < N, other=0.0)[None, :]
    vlo = lo + _round_bf16(bias)
    v = tl.where((vlo > -1.6) & (vlo < -0.4), vlo, hi + bias)
    tl.store(Y + rm[:, None] * N + rn[None, :], _gelu(v), mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel():
            BM, BN, BK = 16, 16, 64
            mb_p2_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, w, b, y, M, N, K, BM=BM, BN=BN, BK=BK)
        return y
