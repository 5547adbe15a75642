"""HONEST, matmul_bias_gelu, split-K style (unlike the ladder's one-pass tiles): kernel 1 gives
every (M tile, N tile, K slice) its float32 partial product `tl.dot` over that slice of K into a
workspace (S, M, N); kernel 2 sums the S partials of each element in order, adds the bias and
applies the tanh-GELU. S = 4 slices when K >= 256, else 1. Float32 accumulation in another order
than a one-pass GEMM (must pass under the accumulation slack of rule 23)."""
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_tanh(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    return 0.5 * v * (1.0 + t)


@triton.jit
def splitk_partial_kernel(x, w, ws, M, N, K, KS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    sl = tl.program_id(2)
    rm = (pm * BM + tl.arange(0, BM)).to(tl.int64)
    rn = (pn * BN + tl.arange(0, BN)).to(tl.int64)
    acc = tl.zeros([BM, BN], tl.float32)
    k_lo = sl * KS
    for k0 in range(0, KS, BK):
        rk = k_lo + k0 + tl.arange(0, BK)
        ok = (rk < K) & (rk < k_lo + KS)
        a = tl.load(x + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & ok[None, :], other=0.0)
        bb = tl.load(w + rk[:, None] * N + rn[None, :], mask=ok[:, None] & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, bb, acc)
    tl.store(ws + sl * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def splitk_finish_kernel(ws, b, y, M, N, S, B: tl.constexpr):
    i = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int64)
    n_all = M * N
    acc = tl.zeros([B], tl.float32)
    for s in range(0, S):
        acc += tl.load(ws + s * n_all + i, mask=i < n_all, other=0.0)
    bias = tl.load(b + i % N, mask=i < n_all, other=0.0).to(tl.float32)
    tl.store(y + i, gelu_tanh(acc + bias).to(y.dtype.element_ty), mask=i < n_all)


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        BM, BN, BK = (64, 64, 32) if x.is_cuda else (32, 32, 32)
        S = 4 if K >= 256 else 1
        KS = triton.cdiv(triton.cdiv(K, S), BK) * BK
        S = triton.cdiv(K, KS) if K else 1
        ws = torch.empty((S, M, N), dtype=torch.float32, device=x.device)
        if K == 0:
            ws.zero_()
        else:
            splitk_partial_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN), S)](x, w, ws, M, N, K, KS,
                                                                               BM=BM, BN=BN, BK=BK)
        splitk_finish_kernel[(triton.cdiv(M * N, 1024),)](ws, b, y, M, N, S, B=1024)
        return y
