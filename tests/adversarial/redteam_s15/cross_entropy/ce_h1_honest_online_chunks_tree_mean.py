"""HONEST, cross_entropy float32, unusual style: per row an online log-sum-exp in base 2 over 256-wide
chunks (running max m and running sum s of 2^(z - m), z = x log2 e, rescaled when the max grows), the
loss ln 2 (m + log2 s) - x_t; the mean by a pairwise tree over a power-of-2 padded buffer of the row
losses, one level per launch. Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def ce_h1_rows(X, T, L, V, CH: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, CH)
    m = -float("inf")
    s = 0.0
    for k in range(0, V, CH):
        ok = k + c < V
        z = tl.load(X + row * V + k + c, mask=ok, other=-float("inf")) * 1.4426950408889634
        cm = tl.max(z, axis=0)
        nm = tl.maximum(m, cm)
        safe = tl.where(nm == -float("inf"), 0.0, nm)
        s = s * tl.exp2(m - safe) + tl.sum(tl.where(ok, tl.exp2(z - safe), 0.0), axis=0)
        m = nm
    t = tl.load(T + row)
    t = ((t % V) + V) % V
    xt = tl.load(X + row * V + t)
    tl.store(L + row, 0.6931471805599453 * (m + tl.log2(s)) - xt)


@triton.jit
def ce_h1_pairs(A, B, n_out):
    i = tl.program_id(0) * 256 + tl.arange(0, 256)
    ok = i < n_out
    tl.store(B + i, tl.load(A + 2 * i, mask=ok, other=0.0) + tl.load(A + 2 * i + 1, mask=ok, other=0.0), mask=ok)


@triton.jit
def ce_h1_final(A, OUT, M):
    tl.store(OUT, tl.load(A) / M)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, logits, target):
        logits, target = logits.contiguous(), target.contiguous()
        M, V = logits.shape
        P = max(2, triton.next_power_of_2(M))
        buf = torch.zeros((P,), dtype=torch.float32, device=logits.device)
        ce_h1_rows[(M,)](logits, target, buf, V, CH=256)
        while P > 1:
            nxt = torch.empty((P // 2,), dtype=torch.float32, device=logits.device)
            ce_h1_pairs[(triton.cdiv(P // 2, 256),)](buf, nxt, P // 2)
            buf, P = nxt, P // 2
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        ce_h1_final[(1,)](buf, out, M)
        return out
