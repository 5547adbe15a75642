"""cross_entropy v2: one Triton program per row, a single pass with an online logsumexp.

Each lane of the BLOCK_V-wide chunk keeps a running max m and a running sum s of exp(x - m): a new
value above m rescales s (s * exp(m - x) + 1), any other adds exp(x - m) -- one exponential per
element, chosen by a select, so the statistic of the whole row comes out of one read. The
target's logit is picked in the same pass (the lane whose column equals the target keeps it), so
the row is read from DRAM exactly once: M * V * itemsize bytes, half of v1's, with a streaming
(evict-first) cache hint. The lanes are combined once at the end; the mean is v1's deterministic
second kernel.
"""

import torch
import triton
import triton.language as tl

#: running-max start: below any finite logit, and (unlike -inf) no NaN from -inf - -inf
NEG_BIG = tl.constexpr(-3.0e38)


@triton.jit
def _ce_row_online_kernel(LOGITS, TARGET, LOSS, V, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = LOGITS + row * V
    t = tl.load(TARGET + row) % V
    t = tl.where(t < 0, t + V, t)  # a class index whichever sign convention % has
    m = tl.full([BLOCK_V], NEG_BIG, tl.float32)
    s = tl.zeros([BLOCK_V], tl.float32)
    x_t = tl.zeros([BLOCK_V], tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf"), eviction_policy="evict_first").to(tl.float32)
        d = x - m
        up = d > 0
        e = tl.exp(tl.where(up, -d, d))
        s = tl.where(up, s * e + 1.0, s + e)
        m = tl.where(up, x, m)
        x_t += tl.where(cols == t, x, 0.0)
    mx = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - mx), axis=0)
    tl.store(LOSS + row, mx + tl.log(total) - tl.sum(x_t, axis=0))


@triton.jit
def _mean_kernel(LOSS, OUT, M, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, M, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(LOSS + idx, mask=idx < M, other=0.0)
    tl.store(OUT, (tl.sum(acc, axis=0) / M).to(OUT.dtype.element_ty))


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_V=2048, num_warps=8):
        super().__init__()
        self.BLOCK_V, self.num_warps = BLOCK_V, num_warps

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        logits, target = logits.contiguous(), target.contiguous()
        M, V = logits.shape
        loss = torch.empty(M, dtype=torch.float32, device=logits.device)
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        _ce_row_online_kernel[(M,)](logits, target, loss, V, BLOCK_V=self.BLOCK_V, num_warps=self.num_warps)
        _mean_kernel[(1,)](loss, out, M, BLOCK=1024, num_warps=4)
        return out
