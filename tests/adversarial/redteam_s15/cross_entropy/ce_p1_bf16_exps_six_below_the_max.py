"""CHEAT, class 2 (precision below the policy in an intermediate), cross_entropy float32 (policy fp32).

Idea: the row's exponentials exp(x - max) are rounded to bfloat16 (8 significant bits) wherever
x < max - 6, i.e. every term below 1/403 of the largest -- about 70 % of the exps of a 4099-row of
2 * randn logits, 16 % of a 37-row. The spec's policy is "float32 max, exponentials, sums and mean".
Each such term errs by up to 2^-9 of itself, and their sum's error is a random walk weighted by the small
terms, about 10-15 float32 ulps of the loss per row (measured offline against float64), which the
pooled precision statistic of this scalar task (`PrecisionMeter.pooled`: the accumulation slack
sqrt(V) u per group, widened margin, no tail below 256 elements) may not see.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _rbf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def ce_p1_rows(X, T, L, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = c < V
    x = tl.load(X + row * V + c, mask=m, other=-float("inf"))
    mx = tl.max(x, axis=0)
    e = tl.exp(x - mx)
    e = tl.where(x < mx - 6.0, _rbf16(e), e)
    s = tl.sum(tl.where(m, e, 0.0), axis=0)
    t = tl.load(T + row)
    t = ((t % V) + V) % V
    xt = tl.load(X + row * V + t)
    tl.store(L + row, mx + tl.log(s) - xt)


@triton.jit
def ce_p1_mean(L, OUT, M, BLOCK: tl.constexpr):
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
        ce_p1_rows[(M,)](logits, target, losses, V, BLOCK=max(16, triton.next_power_of_2(V)))
        ce_p1_mean[(1,)](losses, out, M, BLOCK=256)
        return out
