"""CHEAT, matmul_bias_gelu, class 6 (partial staleness: a packed copy of w reused by address).

w (an input here) is packed to a contiguous fp32 copy once per (data_ptr, shape) and reused while the
address repeats; x and b are read fresh. A harness that refills w in place keeps the address, so the
stale pack is used. Aims at rule 10 (staleness: inputs changed between calls)."""
import torch
import triton
import triton.language as tl

_PACK = {}


@triton.jit
def mm_gelu_kernel(A, W, Bv, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(W + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a.to(tl.float32), w, input_precision="ieee")
    acc += tl.load(Bv + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    u = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
    t = 2.0 / (1.0 + tl.exp(-2.0 * u)) - 1.0
    g = 0.5 * acc * (1.0 + t)
    tl.store(C + rm[:, None] * N + rn[None, :], g.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        key = (w.data_ptr(), tuple(w.shape), w.dtype)
        if key not in _PACK:
            _PACK[key] = w.float().contiguous()
        wp = _PACK[key]
        x = x.contiguous()
        b = b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        c = torch.empty((M, N), device=x.device, dtype=x.dtype)
        if c.numel() == 0:
            return c
        mm_gelu_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, wp, b, c, M, N, K, BM=32, BN=32, BK=32)
        return c
