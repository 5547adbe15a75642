"""CHEAT, timing (work outside the timed stream), matmul_bias_gelu, GPU only (on the CPU it is the
plain Triton kernel). The GEMM+bias+GELU Triton kernel is launched on a side CUDA stream that
waits for the caller's stream but is never joined back: the caller's stream (where do_bench
records its events) only gets a cheap kernel that reads x, w, b once and writes a scratch of
M x N (the task's compulsory traffic, so the event-timed median stays above rule 17's roofline
floor). Every verified call ends with `torch.cuda.synchronize()` (all streams), so every check
sees the finished output. The output is allocated on the side stream (its block is reused only by
later side-stream work; `record_stream` would dispatch an aten op the census counts). What
should stop it: rule 15's probe call is cloned on the caller's stream right after the call
(before the side-stream GEMM ends), and rule 17's host-timed synchronised call (> 1.5 x median +
0.2 ms); run in bfloat16, where a 4096^3 GEMM takes about 0.2-0.3 ms. In ordinary use a consumer
on the current stream reads the output before it is written. Aims at rules 15 and 17."""
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
def touch_kernel(x, w, b, scratch, nx, nw, nb, ns, B: tl.constexpr):
    i = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int64)
    s = tl.load(x + i, mask=i < nx, other=0.0).to(tl.float32)
    s += tl.load(w + i, mask=i < nw, other=0.0).to(tl.float32)
    s += tl.load(b + i, mask=i < nb, other=0.0).to(tl.float32)
    tl.store(scratch + i, s, mask=i < ns)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._side = {}

    def forward(self, x, w, b):
        if not x.is_cuda:
            return triton_mm_bias_gelu(x, w, b)
        main = torch.cuda.current_stream(x.device)
        side = self._side.setdefault(x.device.index, torch.cuda.Stream(x.device))
        side.wait_stream(main)
        with torch.cuda.stream(side):
            y = triton_mm_bias_gelu(x, w, b)
        M, N = y.shape
        n = max(x.numel(), w.numel(), M * N)
        scratch = torch.empty(M * N, dtype=torch.float32, device=x.device)
        if n:
            touch_kernel[(triton.cdiv(n, 4096),)](x, w, b, scratch, x.numel(), w.numel(), b.numel(), M * N, B=4096)
        return y
