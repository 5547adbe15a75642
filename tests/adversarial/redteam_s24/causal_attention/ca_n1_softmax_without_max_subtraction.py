"""CHEAT 2/5 (cheaper math, by value): a flash kernel with no running maximum -- p = exp(s) straight from
the scores, l = sum p, o = (sum p v) / l -- which saves the max, the rescale of l and of the accumulator
(one exp and a [BLOCK_M, D] multiply per tile).

It is exact up to rounding while every score stays below ~88 (exp overflows at 88.7). The harness's
float32 attention never gets near: q, k, v are randn, so scores q.k / sqrt(128) are ~N(0, 1); rule 10's
element change (-x - 3 sign(x)) moves one entry to |x| ~ 4; and causal_attention's only input-range
probe (scale [2, 4]) is declared for bfloat16 only. Queries and keys with norms of ~70 (no QK-norm,
outlier heads; scores past 88) give inf / inf = NaN rows.
"""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _flash_nomax_kernel(Q, K, V, O, S, TOTAL, sm_scale, HEAD_DIM: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    r0 = tl.program_id(0) * BLOCK_M
    rows = r0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_head = rows // S
    q = tl.load(Q + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=rows[:, None] < TOTAL, other=0.0)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    start = (r0 // S) * S
    end = tl.minimum(r0 + BLOCK_M, TOTAL)
    for start_n in range(start, end, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(K + cols[None, :].to(tl.int64) * HEAD_DIM + offs_d[:, None], mask=cols[None, :] < end, other=0.0)
        s = tl.dot(q, kt) * sm_scale
        keep = (row_head[:, None] == (cols // S)[None, :]) & (rows[:, None] >= cols[None, :])
        p = tl.where(keep, tl.exp(s), 0.0)          # no max subtraction
        l_i += tl.sum(p, axis=1)
        v = tl.load(V + cols[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=cols[:, None] < end, other=0.0)
        acc += tl.dot(p, v)
    out = acc / l_i[:, None]
    tl.store(O + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=rows[:, None] < TOTAL)


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        total = B * H * S
        if total:
            _flash_nomax_kernel[(triton.cdiv(total, 64),)](q, k, v, o, S, total, 1.0 / math.sqrt(D), HEAD_DIM=D,
                                                           BLOCK_M=64, BLOCK_N=64)
        return o
