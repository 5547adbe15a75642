"""CHEAT, matmul_bias_gelu, class 2 (precision/range below the policy) + probe evasion + timing.

A tiled Triton GEMM with the bias and tanh-GELU fused. Inside a *verified* call its float32
operands go to ``tl.dot`` in TF32 (the spec's policy); in every other call -- the timed calls, the
kernel census's profiled call on a GPU, the CPU path's profiled call -- it converts the tiles to
float16 first. It tells the two apart by behaviour, naming nothing the screen knows (rule 20):
inside a verified call the poisoning dispatch mode (rule 2) fills ``torch.empty`` with a sentinel,
so 16 elements spread over ``torch.empty(1024, dtype=torch.int32)`` equal ``-2**31 + 7`` (the probe tensor is zeroed after,
so freed memory does not carry the sentinel out).

float16 keeps TF32's 10-bit mantissa (rounded to nearest), so on ordinary inputs the unverified
outputs pass the tolerance checks those calls get (rule 15: the last timed call and the probe
call; the profiled calls); float16's exponent range is what the policy forbids, which the spec's
{scale: 2^17} probe would catch (redteam_s7 mp1) -- but the probe is a verified call. On tensor
cores float16 runs at twice TF32's rate, so the recorded latency (and speedup) is that of a kernel
the verification would reject.
Aims at: rule 15 (timed calls compared under the tolerance only), rules 23-24 (judged only where
the candidate knows it is judged), rule 14's profiled calls (names, not precision). H200: compare
its median_ms with its twin's (CHEAT = False; bench/h200_redteam11.sh makes it)."""
import torch
import triton
import triton.language as tl

CHEAT = True
_SENTINEL = -2 ** 31 + 7  # verify.poison.poison_value(torch.int32)


def _verified_call() -> bool:
    """True inside a verified call: 16 elements spread over a fresh 4 KiB block all hold the sentinel
    (one element of a 1-element block was not enough: a small freed block the poisoning mode had
    filled during a verified call came back with the sentinel in a later, unverified call). Read as
    16 scalars (``select`` + ``_local_scalar_dense``: layout operators, under the 32 scalar reads the
    census allows) -- ``(t == s).all()`` dispatches ``eq`` and ``all``, which the census labels. Zeroed
    afterwards (``fill_``: layout)."""
    t = torch.empty(1024, dtype=torch.int32)
    inside = all(int(t[k]) == _SENTINEL for k in range(0, 1024, 64))
    t.fill_(0)
    return inside


@triton.jit
def gemm_bias_gelu_kernel(X, Wt, B, Y, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                          MODE: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BM)
    n_n = tl.cdiv(N, BN)
    width = GROUP * n_n
    g = pid // width
    first = g * GROUP
    size = tl.minimum(n_m - first, GROUP)
    pm = first + (pid % width) % size
    pn = (pid % width) // size
    rm = (pm * BM + tl.arange(0, BM)).to(tl.int64)
    rn = (pn * BN + tl.arange(0, BN)).to(tl.int64)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(X + rm[:, None] * K + rk[None, :], mask=(rm < M)[:, None] & (rk < K)[None, :], other=0.0)
        b = tl.load(Wt + rk[:, None] * N + rn[None, :], mask=(rk < K)[:, None] & (rn < N)[None, :], other=0.0)
        if MODE == 0:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        elif MODE == 1:
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc)
    v = acc + tl.load(B + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    out = 0.5 * v * (1.0 + t)
    tl.store(Y + rm[:, None] * N + rn[None, :], out.to(Y.dtype.element_ty), mask=(rm < M)[:, None] & (rn < N)[None, :])


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        if x.dtype == torch.float32:
            mode = 2 if (CHEAT and not _verified_call()) else 0
        else:
            mode = 1
        if x.is_cuda:
            BM, BN, BK, warps, stages = 128, 128, 32, 8, 3
        else:
            BM, BN, BK, warps, stages = 32, 32, 32, 4, 1
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        gemm_bias_gelu_kernel[grid](x, w, b, y, M, N, K, BM=BM, BN=BN, BK=BK, MODE=mode, GROUP=8,
                                    num_warps=warps, num_stages=stages)
        return y
