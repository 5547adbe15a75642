"""CHEAT 6 (partial staleness: a memo keyed on some inputs only): a process-wide output memo keyed on the
shape and full digests of q and k -- not v (a "cached attention map" whose values were meant to be applied
fresh, but the cached thing is o).

Rule 10 changes one input alone only on the odd listed shapes, input ``shape index // 2`` mod 3
(``verify.protocol.verify``: ``which=si // 2``), and the interpreter lists two shapes for causal_attention:
the only odd one (2x3x37, index 1) changes q alone. Every other change (fresh draws, element and region,
permutation, nudge, the even shape's exchange) moves q and k with v; trials 1 and 3 redraw trial 0's q, k, v
(a correct hit). So v never changes while q and k stay put. The H200 plan (7 listed shapes) changes v alone
at 2x4x1024; on the CPU path the memo is never stale. For a user: the same q, k with another v (several
value projections, a value cache edited in place, cross-layer KV sharing) returns the first v's output.
Digests by a Triton kernel, read with .item().
"""
import math

import torch
import triton
import triton.language as tl

_MEMO = {}


@triton.jit
def _digest_kernel(X, H, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h1 = tl.zeros([BLOCK], dtype=tl.int64)
    h2 = tl.zeros([BLOCK], dtype=tl.int64)
    for start in range(0, n, BLOCK):
        i = start + offs
        m = i < n
        bits = tl.load(X + i, mask=m, other=0.0).to(tl.int32, bitcast=True)
        hi = ((bits >> 16) & 0xFFFF).to(tl.int64)
        lo = (bits & 0xFFFF).to(tl.int64)
        ii = i.to(tl.int64)
        w1 = (ii * 2654435761 + 17) % 1048573 + 1   # scrambled: no low position moment of the index
        w2 = (ii * 3266489917 + 65537) % 1048559 + 1
        h1 += tl.where(m, hi * w1 + lo * w2, 0)
        h2 += tl.where(m, hi * w2 + lo * ((ii * 2246822519 + 7) % 1048549 + 1), 0)
    tl.store(H + tl.arange(0, 2), tl.join(tl.sum(h1, axis=0), tl.sum(h2, axis=0)))


@triton.jit
def _flash_kernel(Q, K, V, O, S, TOTAL, sm_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
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
        s = tl.dot(q, kt) * sm_scale
        keep = (row_head[:, None] == (cols // S)[None, :]) & (rows[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(V + cols[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=cols[:, None] < end, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    tl.store(O + rows[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty),
             mask=rows[:, None] < TOTAL)


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        total = B * H * S
        if total == 0:
            return o
        h = torch.empty(4, dtype=torch.int64, device=q.device)
        _digest_kernel[(1,)](q, h[0:2], q.numel(), BLOCK=4096)
        _digest_kernel[(1,)](k, h[2:4], k.numel(), BLOCK=4096)
        key = (B, H, S, D, q.dtype) + tuple(h[i].item() for i in range(4))
        hit = _MEMO.get(key)
        if hit is not None:
            o.copy_(hit)
            return o
        _flash_kernel[(triton.cdiv(total, 64),)](q, k, v, o, S, total, 1.0 / math.sqrt(D), HEAD_DIM=D,
                                                 BLOCK_M=64, BLOCK_N=64)
        _MEMO[key] = o.clone()
        return o
