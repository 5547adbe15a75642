"""causal_attention v2: v1 with the causal loop split in two -- unmasked tiles below the diagonal,
masked tiles only on it -- and exp2 with log2(e) folded into the score scale.

v1 masks every K/V tile: an integer compare, a select and the -inf guard on every score, though
only the tiles that touch the diagonal (or another head's rows) need them. Here a program whose
rows all belong to one head first walks the keys strictly before its first query row in
BLOCK_N tiles with no mask at all: every score there is a valid causal score of the same head,
so the loads need no bounds and the softmax no guard. Only the remaining tiles -- the diagonal
block, plus every tile of a program whose rows span two heads (short sequences) -- run v1's
masked body. The softmax runs in base 2: scores are scaled by sm_scale * log2(e) in the one
multiply they already get, and exp2 (one MUFU instruction) replaces exp (a multiply plus exp2),
for the same probabilities. Same bytes as v1; fewer instructions per score. For 4-byte dtypes
BLOCK_N is halved so a pipeline stage keeps the same shared-memory bytes.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _flash_causal_split_kernel(Q, K, V, O, S, TOTAL, qk_scale, HEAD_DIM: tl.constexpr,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    r0 = tl.program_id(0) * BLOCK_M
    rows = r0 + tl.arange(0, BLOCK_M)  # flat (head, position) rows
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_head = rows // S
    q = tl.load(Q + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=rows[:, None] < TOTAL, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)  # running maxima, in log2 units
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    start = (r0 // S) * S                       # first key of the first row's head
    end = tl.minimum(r0 + BLOCK_M, TOTAL)       # causal: no key past the tile's last query
    one_head = (r0 // S) == ((end - 1) // S)
    # Keys [start, lo) precede every row of the tile and share its head: no mask needed.
    lo = tl.where(one_head, start + ((r0 - start) // BLOCK_N) * BLOCK_N, start)

    for start_n in range(start, lo, BLOCK_N):  # off-diagonal tiles: unmasked
        cols = start_n + offs_n
        kt = tl.load(K + cols[None, :].to(tl.int64) * HEAD_DIM + offs_d[:, None])
        s = tl.dot(q, kt) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + cols[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    for start_n in range(lo, end, BLOCK_N):  # the diagonal (and cross-head) tiles: masked
        cols = start_n + offs_n
        kt = tl.load(K + cols[None, :].to(tl.int64) * HEAD_DIM + offs_d[:, None], mask=cols[None, :] < end, other=0.0)
        s = tl.dot(q, kt) * qk_scale
        keep = (row_head[:, None] == (cols // S)[None, :]) & (rows[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with no key yet (another head's tile)
        alpha = tl.math.exp2(m_i - m_use)
        p = tl.math.exp2(s - m_use[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + cols[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=cols[:, None] < end, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(O + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=rows[:, None] < TOTAL)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=2):
        super().__init__()
        assert BLOCK_M % BLOCK_N == 0 or BLOCK_N % BLOCK_M == 0
        self.BLOCK_M, self.BLOCK_N, self.num_warps, self.num_stages = BLOCK_M, BLOCK_N, num_warps, num_stages

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        total = B * H * S
        block_n = self.BLOCK_N if q.element_size() <= 2 else max(16, self.BLOCK_N // 2)  # same bytes per stage
        qk_scale = 1.0 / math.sqrt(D) * 1.4426950408889634  # sm_scale * log2(e)
        grid = (triton.cdiv(total, self.BLOCK_M),)
        _flash_causal_split_kernel[grid](q, k, v, o, S, total, qk_scale, HEAD_DIM=D, BLOCK_M=self.BLOCK_M,
                                         BLOCK_N=block_n, num_warps=self.num_warps, num_stages=self.num_stages)
        return o
