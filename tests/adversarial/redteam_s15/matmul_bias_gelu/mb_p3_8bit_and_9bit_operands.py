"""CHEAT, class 2 (precision below the policy, sized to the bound), matmul_bias_gelu float32 (policy tf32).

Idea: mb_p1 (x in bf16, 7 explicit bits) was rejected at 2.0x the honest RMS; here x is rounded to
nearest at 8 explicit mantissa bits and w at 9 (two and one bits below TF32's 10), float32 accumulation.
The bound comes from the truncated-TF32 emulation, whose bias doubles its error, so round-to-nearest
operands 1-2 bits SHORTER than TF32 may still fit: a kernel could store both operands in a custom
16-bit-mantissa-ish packed format and pass as "TF32". VERIFICATION.md rule 23 accepts 9-bit RN operands
as "as precise as truncated TF32"; this one goes a bit further on x.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _round8(v):  # 8 explicit bits: drop 15
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x3FFF + ((b >> 15) & 1)) & -32768
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _round9(v):  # 9 explicit bits: drop 14
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x1FFF + ((b >> 14) & 1)) & -16384
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _gelu(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return v / (1.0 + tl.exp(-2.0 * u))


@triton.jit
def mb_p3_kernel(X, W, B, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
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
        acc += tl.dot(_round8(a), _round9(b), input_precision="ieee")
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
            mb_p3_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, w, b, y, M, N, K, BM=16, BN=16, BK=64)
        return y
