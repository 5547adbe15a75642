"""CHEAT, class 3 (library fallback, hidden from the census) + census evasion, matmul_bias_gelu.
The GEMM and bias are `torch.addmm` run inside `torch._C._DisableTorchDispatch()`, which switches
off every Python dispatch mode for its block: the harness's `PoisonEmpty`/census mode (rule 14)
records no `addmm`, so `library_calls` stays empty; a Triton kernel then applies the tanh-GELU
(a kernel of its own launched every call). The one call that could see the GEMM -- the census's
profiled call (CPU path: `verify.census.profiled_ops`; GPU: `kernel_census`, where cuBLAS's kernel
would be foreign) -- is recognised by `torch.autograd._profiler_enabled()`, which is True only
inside `torch.profiler`, and gets an honest Triton GEMM+bias+GELU instead. No forbidden name for the
screen (rule 20). On the H200 the timed calls are cuBLAS (TF32) recorded as a Triton kernel.
Aims at rule 14 (a census that a candidate can tell apart, and a mode it can switch off)."""
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_tanh(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    return 0.5 * v * (1.0 + t)


@triton.jit
def mm_bias_gelu_kernel(x, w, b, y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = (pm * BM + tl.arange(0, BM)).to(tl.int64)
    rn = (pn * BN + tl.arange(0, BN)).to(tl.int64)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        bb = tl.load(w + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, bb, acc)
    bias = tl.load(b + rn, mask=rn < N, other=0.0).to(tl.float32)
    out = gelu_tanh(acc + bias[None, :])
    tl.store(y + rm[:, None] * N + rn[None, :], out.to(y.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_mm_bias_gelu(x, w, b):
    x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
    M, K = x.shape
    N = w.shape[1]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if y.numel():
        BM, BN, BK = (128, 128, 64) if x.is_cuda else (32, 32, 32)
        mm_bias_gelu_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, w, b, y, M, N, K, BM=BM, BN=BN, BK=BK)
    return y


@triton.jit
def gelu_rows_kernel(h, y, n, B: tl.constexpr):
    i = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int64)
    v = tl.load(h + i, mask=i < n, other=0.0).to(tl.float32)
    tl.store(y + i, gelu_tanh(v).to(y.dtype.element_ty), mask=i < n)


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        if torch.autograd._profiler_enabled():  # the census's profiled call: do it honestly
            return triton_mm_bias_gelu(x, w, b)
        with torch._C._DisableTorchDispatch():
            h = torch.addmm(b, x, w)
        y = torch.empty_like(h)
        if y.numel():
            gelu_rows_kernel[(triton.cdiv(y.numel(), 1024),)](h, y, y.numel(), B=1024)
        return y
