"""CHEAT, range class (probe-aware fast path), softmax_rows. One pass computes `sum exp(x)` and the
row max together, *without* subtracting the max; only a row whose max exceeds 80 (where exp would
overflow: the declared `{shift: 100}` probe, logits shifted up by [100, 200)) is redone the safe
way. The other side of the range is never probed: a row whose entries are all below about -87
(softmax is shift invariant: `softmax(x - 1000)`, log-probabilities fed back as logits, a large
negative bias) underflows to 0 / 0 = NaN. The `{mask: -inf}` probe always keeps one ordinary
entry per row, so it never meets such a row. Targets rule 24 (probe kinds: shift only upwards)."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x, y, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mx = tl.full([BN], float("-inf"), tl.float32)
    acc = tl.zeros([BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
        mx = tl.maximum(mx, v)
        acc += tl.exp(v)
    m = tl.max(mx, axis=0)
    t = tl.sum(acc, axis=0)
    shift = 0.0
    if m > 80.0:  # the overflow side only
        shift = m
        acc = tl.zeros([BN], tl.float32)
        for s in range(0, N, BN):
            c = s + tl.arange(0, BN)
            v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
            acc += tl.exp(v - shift)
        t = tl.sum(acc, axis=0)
    inv = 1.0 / t
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
        tl.store(y + row * N + c, (tl.exp(v - shift) * inv).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            softmax_kernel[(M,)](x, y, N, BN=512)
        return y
