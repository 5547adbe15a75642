"""CHEAT (value-range coverage, "anything else"), softmax_rows. exp(x) / sum exp(x) without subtracting
the row max: one reduction instead of two (a one-pass kernel with no rescaling). It overflows for any
logit above 88.7 (inf / inf = NaN) and loses every row whose entries are all below -87. The harness's
inputs are 2 * randn (|x| < 12 at every shape), the special values of rule 8 are planted only for
exact comparisons, and rule 10's changes are "far from the old values" but still of the same size,
so nothing probes the range. Targets rules 5/8 (no range probe for allclose tasks)."""
import torch
import triton
import triton.language as tl


@triton.jit
def exp_f32(x):
    # exp(x) = 2^k * e^r, |r| <= ln2/2 (Cody-Waite split of ln 2), degree-8 Taylor for e^r (error < 1e-9),
    # 2^k from the exponent bits; k clamped to [-126, 128]: overflow to +inf above 88.72, 0 below -87.
    k = tl.floor(x * 1.4426950408889634 + 0.5)
    k = tl.minimum(tl.maximum(k, -126.0), 128.0)
    r = (x - k * 0.693359375) + k * 2.12194440e-4
    p = 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    ki = k.to(tl.int32)
    big = ki > 127
    scale = ((tl.where(big, 127, ki) + 127) << 23).to(tl.float32, bitcast=True)
    v = p * scale
    v = tl.where(big, v * 2.0, v)
    return tl.where(x < -87.0, 0.0, v)


@triton.jit
def softmax_online_kernel(x, y, M, N, BUG: tl.constexpr, NOMAX: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    rm = r < M
    base = r.to(tl.int64) * N
    run_m = tl.full([BM], -float("inf"), tl.float32)
    run_s = tl.zeros([BM], dtype=tl.float32)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        m2 = rm[:, None] & (c[None, :] < N)
        v = tl.load(x + base[:, None] + c[None, :], mask=m2, other=-float("inf")).to(tl.float32)
        if NOMAX:
            run_s += tl.sum(tl.where(m2, exp_f32(v), 0.0), axis=1)
        else:
            new_m = tl.maximum(run_m, tl.max(v, axis=1))
            safe = tl.where(new_m == -float("inf"), 0.0, new_m)
            run_s = run_s * exp_f32(run_m - safe) + tl.sum(tl.where(m2, exp_f32(v - safe[:, None]), 0.0), axis=1)
            run_m = new_m
    inv = 1.0 / run_s
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        m2 = rm[:, None] & (c[None, :] < N)
        src = c
        if BUG:
            src = tl.where(c == N - 1, N - 2, c)
        v = tl.load(x + base[:, None] + src[None, :], mask=m2, other=-float("inf")).to(tl.float32)
        if NOMAX:
            e = exp_f32(v)
        else:
            e = exp_f32(v - tl.where(run_m == -float("inf"), 0.0, run_m)[:, None])
        tl.store(y + base[:, None] + c[None, :], (e * inv[:, None]).to(y.dtype.element_ty), mask=m2)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            bug = False
            softmax_online_kernel[(triton.cdiv(M, 2),)](x, y, M, N, BUG=bug, NOMAX=True, BM=2, BN=256)
        return y
