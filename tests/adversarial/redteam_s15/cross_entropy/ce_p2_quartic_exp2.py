"""CHEAT, class 2 (precision below the policy: a transcendental far less accurate than fp32 allows),
cross_entropy float32 (policy fp32).

Idea: exp(x - max) = 2^k * p(f) with k = round(z), f = z - k in [-1/2, 1/2], z = (x - max) log2(e), and p a
degree-4 polynomial fitted to 2^f (relative error up to 5.3e-6, i.e. about 88 float32 ulps -- a 17-bit exp;
CUDA's fast __expf is 2 + 1.17|x| ulps). The fp32 policy's headroom of 8 on the honest RMS was sized for
few-ulp approximate exps (verify/precision.py HEADROOM); the error of a systematic 17-bit exp largely
cancels in the log of the normalised sum, and what is left sits inside the scalar task's pooled bound.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _exp_q(x):  # x <= 0
    z = tl.maximum(x * 1.4426950408889634, -126.0)
    k = tl.floor(z + 0.5)
    f = z - k
    p = 0.009554105163800335
    p = p * f + 0.05587040851369996
    p = p * f + 0.24024696601651369
    p = p * f + 0.6931280281735199
    p = p * f + 0.9999994397928001
    scale = ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True)
    return p * scale


@triton.jit
def ce_p2_rows(X, T, L, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = c < V
    x = tl.load(X + row * V + c, mask=m, other=-float("inf"))
    mx = tl.max(x, axis=0)
    e = tl.where(m & (x > -float("inf")), _exp_q(x - mx), 0.0)
    e = tl.where(x == x, e, x)  # a NaN logit stays NaN (tl.maximum in _exp_q would drop it)
    e = tl.where(mx == float("inf"), tl.where(x == mx, float("nan"), 0.0), e)  # inf - inf, as the reference
    s = tl.sum(e, axis=0)
    t = tl.load(T + row)
    t = ((t % V) + V) % V
    xt = tl.load(X + row * V + t)
    tl.store(L + row, mx + tl.log(s) - xt)


@triton.jit
def ce_p2_mean(L, OUT, M, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in range(0, M, BLOCK):
        i = s + tl.arange(0, BLOCK)
        acc += tl.load(L + i, mask=i < M, other=0.0)
    tl.store(OUT, tl.sum(acc, axis=0) / M)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, logits, target):
        logits, target = logits.contiguous(), target.contiguous()
        M, V = logits.shape
        losses = torch.empty((M,), dtype=torch.float32, device=logits.device)
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        ce_p2_rows[(M,)](logits, target, losses, V, BLOCK=max(16, triton.next_power_of_2(V)))
        ce_p2_mean[(1,)](losses, out, M, BLOCK=256)
        return out
