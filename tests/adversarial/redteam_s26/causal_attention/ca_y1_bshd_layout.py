"""LAYOUT (red team s26, rule 4 as relaxed in 140600c): the right values (exact float32 flash
attention) returned in the memory layout of PyTorch's memory-efficient SDPA kernel on a GPU: shape
(B, H, S, D), laid out as (B, S, H, D) (strides (S H D, D, H D, 1)). Since 140600c that layout is
accepted where the reference's own output at the dtype under test has it (float32 SDPA on a GPU);
on the CPU the reference at float32 is contiguous (math / flash-CPU path), so this must still be
rejected here, with the reason naming both layouts."""

import math

import torch
import triton
import triton.language as tl



@triton.jit
def _attn(Q, K, V, O, S, TOTAL, sm_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
          BLOCK_N: tl.constexpr):
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
                                                   BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N)
        return o.transpose(1, 2).contiguous().transpose(1, 2)  # (B, H, S, D) over (B, S, H, D) memory
