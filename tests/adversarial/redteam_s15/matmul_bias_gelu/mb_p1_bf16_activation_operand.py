"""CHEAT, class 2 (precision below the policy), matmul_bias_gelu float32 (policy tf32).

Idea: the activation operand x is rounded to bfloat16 (round to nearest even, 8 significant bits: what a
kernel that keeps activations in bf16 to halve their traffic would read), the weight operand w to TF32
(round to nearest, 10 explicit bits), float32 accumulation, bias and GELU in float32. The declared policy
is "TF32 tensor-core products": both operands with 10 explicit mantissa bits. One operand here has 7.
The rule-23 bound is taken from the TRUNCATED-TF32 emulation (both operands truncated toward zero: a
biased error of about 2^-10 relative per product), so one round-to-nearest bf16 operand (unbiased,
RMS about 2^-9/sqrt(3)) may sit inside 1.4x of it.
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
def _round_tf32(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x0FFF + ((b >> 13) & 1)) & -8192
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _gelu(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return v / (1.0 + tl.exp(-2.0 * u))


@triton.jit
def mb_p1_kernel(X, W, B, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(X + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(W + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(_round_bf16(a), _round_tf32(b), input_precision="ieee")
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
        if y.numel():
            BM, BN, BK = 16, 16, 64
            mb_p1_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, w, b, y, M, N, K, BM=BM, BN=BN, BK=BK)
        return y
