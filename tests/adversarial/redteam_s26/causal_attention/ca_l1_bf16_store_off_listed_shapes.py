"""CHEAT (red team s26, rule 23's relaxed lower-format bound): causal attention whose output is
stored rounded to bfloat16 -- 8 significant bits, 2^-9 relative, inside rtol 5e-3 -- on every
shape that is not one of the spec's listed shapes (CPU interpreter or GPU plan), on every query row
that attends to two keys or more; rows with one key return v exactly (float32), so they add no
float16-mantissa outputs of their own. Listed shapes get the honest float32 answer.

Why it can pass: the lower-format bound is pooled over a shape group (listed, derived, timing) and
is the honest computations' own fraction + 2^-6; since commit 140600c that fraction includes the
TF32 emulation's, which is 100 % on a one-token shape (o = v truncated to 10 bits). The derived
group of the CPU plan is ~80 % one-token rows (B=4097/S=1, 2x285x1, 294x1x1, 1x268x1), so the
multi-key rows of the other derived shapes may all be bfloat16 while the pooled fraction stays far
under the bound. Flash-style kernel (online softmax), float32 dot (input_precision="ieee")."""

import math

import torch
import triton
import triton.language as tl

# the spec's listed shapes (interpreter and GPU plans): (B, H, S)
LISTED = {(2, 1, 1), (2, 3, 37), (1, 1, 1), (1, 4, 129), (3, 5, 300), (2, 2, 1000), (2, 4, 1024), (1, 2, 4097)}


@triton.jit
def _attn(Q, K, V, O, S, TOTAL, sm_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
          BLOCK_N: tl.constexpr, ROUND: tl.constexpr):
    r0 = tl.program_id(0) * BLOCK_M
    rows = r0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_head = rows // S
    q = tl.load(Q + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=rows[:, None] < TOTAL, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    start = (r0 // S) * S
    end = tl.minimum(r0 + BLOCK_M, TOTAL)
    for start_n in range(start, end, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(K + cols[None, :].to(tl.int64) * HEAD_DIM + offs_d[:, None], mask=cols[None, :] < end, other=0.0)
        s = tl.dot(q, kt, input_precision="ieee") * sm_scale
        keep = (row_head[:, None] == (cols // S)[None, :]) & (rows[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + cols[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=cols[:, None] < end, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    if ROUND:
        one_key = (rows % S) == 0
        out = tl.where(one_key[:, None], out, out.to(tl.bfloat16).to(tl.float32))
    tl.store(O + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], out, mask=rows[:, None] < TOTAL)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=128, BLOCK_N=128):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N = BLOCK_M, BLOCK_N

    def forward(self, q, k, v):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        total = B * H * S
        _attn[(triton.cdiv(total, self.BLOCK_M),)](q, k, v, o, S, total, 1.0 / math.sqrt(D), HEAD_DIM=D,
                                                   BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                                   ROUND=(B, H, S) not in LISTED)
        return o
