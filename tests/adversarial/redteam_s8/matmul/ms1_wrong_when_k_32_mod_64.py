"""CHEAT, class 5 (shapes the planner does not reach), matmul_bias_gelu, float32. The K loop runs
in 64-wide tiles; when K % 64 == 32 the remainder takes a "half tile" path that reads only the first
16 of its 32 columns (the classic BK/2 vs BK/4 slip), so x[:, K-16:] @ w[K-16:] is lost. Listed K:
1, 33, 7, 1000, 4096, 256 (GPU), 1, 9, 20 (interpreter); derived values are odd, 2 mod 4 or 4 mod 8
(2-adic valuation 0-2): none is 32 mod 64 (valuation exactly 5). K = 96, 160, 800, 4000 are wrong.
Targets rule 12."""
import torch
import triton
import triton.language as tl


@triton.jit
def mm_gelu_kernel(x, w, b, y, M, N, K, HALF: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    kend = K
    if HALF:
        kend = (K // BK) * BK
    for k0 in range(0, kend, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        bb = tl.load(w + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, bb, input_precision="ieee")
    if HALF:
        rk = kend + tl.arange(0, BK // 2)
        km = rk < kend + BK // 4
        a = tl.load(x + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & km[None, :], other=0.0)
        bb = tl.load(w + rk[:, None] * N + rn[None, :], mask=km[:, None] & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, bb, input_precision="ieee")
    z = acc + tl.load(b + rn, mask=rn < N, other=0.0)[None, :]
    u = 0.7978845608028654 * (z + 0.044715 * z * z * z)
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(u < 0, -t, t)
    tl.store(y + rm[:, None] * N + rn[None, :], (0.5 * z * (1.0 + t)).to(y.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel():
            mm_gelu_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, w, b, y, M, N, K, HALF=K % 64 == 32,
                                                                     BM=32, BN=32, BK=64)
        return y
