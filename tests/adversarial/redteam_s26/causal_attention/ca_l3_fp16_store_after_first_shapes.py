"""CHEAT (red team s26, rule 23's relaxed lower-format bound), not keyed on the spec's shapes: honest
float32 on the first LISTED_COUNT distinct (B, H, S) the process is called with, the output stored
rounded to float16 (rows with two keys or more; one-key rows return v exactly) on every shape met
after them. The harness verifies the listed shapes first and the derived shapes (rule 12) later, so
"the first shapes" are the listed ones whatever they are: 2 on the interpreter plan, 7 on a GPU's
(the count is public: the spec lists them). The state is module-global (rule 21 builds a fresh
module per trial). The pooled lower-format bound of the derived group (the honest TF32 emulation's
100 % on one-token shapes) absorbs the float16 outputs (ca_l2's mechanism)."""

import math

import torch
import triton
import triton.language as tl

LISTED_COUNT = 7 if torch.cuda.is_available() else 2  # the GPU plan lists 7 shapes, the interpreter 2
_SEEN = []  # the distinct shapes met so far, in order


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
        out = tl.where(one_key[:, None], out, out.to(tl.float16).to(tl.float32))
    tl.store(O + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], out, mask=rows[:, None] < TOTAL)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=128, BLOCK_N=128):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N = BLOCK_M, BLOCK_N

    @staticmethod
    def _late(shape):
        if shape not in _SEEN:
            _SEEN.append(shape)
        return _SEEN.index(shape) >= LISTED_COUNT

    def forward(self, q, k, v):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        total = B * H * S
        _attn[(triton.cdiv(total, self.BLOCK_M),)](q, k, v, o, S, total, 1.0 / math.sqrt(D), HEAD_DIM=D,
                                                   BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                                   ROUND=self._late((B, H, S)))
        return o
