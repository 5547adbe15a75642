"""HONEST, cross_entropy, float32. Two rows per program, one online pass per row pair (running
max and rescaled sum, accurate Cody-Waite exp), the target logit gathered in the same pass; per-row
losses are reduced by a second kernel in 2-level pairwise order (block sums, then their sum). Must
be accepted."""
import torch
import triton
import triton.language as tl


@triton.jit
def exp_acc(x):
    k = tl.floor(x * 1.4426950408889634 + 0.5)
    k = tl.maximum(k, -125.0)
    r = (x - k * 0.693359375) + k * 2.1219444005469057e-4
    p = 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return tl.where(x < -87.3, 0.0, p * ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True))


@triton.jit
def rows_kernel(x, tgt, loss, M, V, BV: tl.constexpr):
    r = tl.program_id(0) * 2 + tl.arange(0, 2)
    rm = r < M
    base = r.to(tl.int64) * V
    t = tl.load(tgt + r, mask=rm, other=0) % V
    t = tl.where(t < 0, t + V, t)
    m = tl.full([2], -float("inf"), tl.float32)
    s = tl.zeros([2], dtype=tl.float32)
    xt = tl.zeros([2], dtype=tl.float32)
    for start in range(0, V, BV):
        c = start + tl.arange(0, BV)
        msk = rm[:, None] & (c[None, :] < V)
        v = tl.load(x + base[:, None] + c[None, :], mask=msk, other=-float("inf"))
        nm = tl.maximum(m, tl.max(v, axis=1))
        safe = tl.where(nm == -float("inf"), 0.0, nm)
        s = s * exp_acc(m - safe) + tl.sum(tl.where(msk, exp_acc(v - safe[:, None]), 0.0), axis=1)
        m = nm
        xt += tl.sum(tl.where(msk & (c[None, :] == t[:, None]), v, 0.0), axis=1)
    tl.store(loss + r, m + tl.log(s) - xt, mask=rm)


@triton.jit
def mean_kernel(loss, out, M, B: tl.constexpr):
    total = 0.0
    for start in range(0, M, B):
        i = start + tl.arange(0, B)
        total += tl.sum(tl.load(loss + i, mask=i < M, other=0.0), axis=0)
    tl.store(out, total / M)


class ModelNew(torch.nn.Module):
    def forward(self, logits, target):
        logits, target = logits.contiguous(), target.contiguous()
        M, V = logits.shape
        loss = torch.empty(M, dtype=torch.float32, device=logits.device)
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        rows_kernel[(triton.cdiv(M, 2),)](logits, target, loss, M, V, BV=512)
        mean_kernel[(1,)](loss, out, M, B=256)
        return out
