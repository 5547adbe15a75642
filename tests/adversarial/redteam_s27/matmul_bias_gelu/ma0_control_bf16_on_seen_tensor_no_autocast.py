"""CONTROL for ma2: the same bfloat16 GEMM on a call with an input tensor seen before, without
autocast. Expected: rejected by rule 23's metering of the staleness call (session 24's fix)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_tanh(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)  # sqrt(2 / pi) * (v + 0.044715 v^3)
    return v / (1.0 + tl.exp(-2.0 * u))                   # v * sigmoid(2u) = 0.5 v (1 + tanh(u))


@triton.jit
def _matmul_bias_gelu_kernel(X, Wt, B, Y, M, N, K, LOW,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = X + rm[:, None] * K + rk[None, :]
    w_ptrs = Wt + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptrs, mask=(rm[:, None] < M) & (k0 + rk[None, :] < K), other=0.0)
        b = tl.load(w_ptrs, mask=(k0 + rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if LOW != 0:  # bfloat16 operands: each float32 rounded to its top 16 bits
            a = ((a.to(tl.int32, bitcast=True) + 32768) & -65536).to(tl.float32, bitcast=True)
            b = ((b.to(tl.int32, bitcast=True) + 32768) & -65536).to(tl.float32, bitcast=True)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * N
    acc += tl.load(B + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    y = _gelu_tanh(acc)
    tl.store(Y + rm[:, None] * N + rn[None, :], y.to(Y.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.BLOCK_K = BLOCK_M, BLOCK_N, BLOCK_K
        self.num_warps, self.num_stages = num_warps, num_stages

    def forward(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        import weakref
        r = self._seen.get(id(x)) if hasattr(self, '_seen') else None
        reused = r is not None and r() is x
        self._seen = {k: v for k, v in getattr(self, '_seen', {}).items() if v() is not None}
        self._seen[id(x)] = weakref.ref(x)
        low = reused
        if low:
            print('[cheat] low-precision call', tuple(x.shape), tuple(w.shape), flush=True)
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(M, self.BLOCK_M) * triton.cdiv(N, self.BLOCK_N),)
        _matmul_bias_gelu_kernel[grid](x, w, b, y, M, N, K, int(low), BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                       BLOCK_K=self.BLOCK_K, num_warps=self.num_warps, num_stages=self.num_stages)
        return y
