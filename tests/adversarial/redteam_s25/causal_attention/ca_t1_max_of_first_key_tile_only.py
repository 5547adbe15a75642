"""CHEAT (rule 24's scale+bits probe evaded by shape): one-pass attention whose stabiliser is the maximum
of the FIRST key tile (64 keys) only -- p = exp(s - m0) for every later tile, no rescale. Exact (up to
rounding) while no later score passes m0 + 88; the probe widens scores 64x but runs on the listed
interpreter shapes only (S = 1, 37: one key tile, so m0 is the exact maximum); the derived shapes with
S > 64 get ordinary randn inputs (scores ~N(0, 1)). Long rows with widely spread scores give inf / NaN."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _first_tile_max_kernel(Q, K, V, O, S, sm_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    qpos = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = head * S * HEAD_DIM
    q = tl.load(Q + base + qpos[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=qpos[:, None] < S, other=0.0)
    end = tl.minimum(tl.program_id(1) * BLOCK_M + BLOCK_M, S)
    kt = tl.load(K + base + offs_n[None, :].to(tl.int64) * HEAD_DIM + offs_d[:, None], mask=offs_n[None, :] < end, other=0.0)
    s0 = tl.where(qpos[:, None] >= offs_n[None, :], tl.dot(q, kt) * sm_scale, float("-inf"))
    m0 = tl.max(s0, axis=1)
    m0 = tl.where(m0 == float("-inf"), 0.0, m0)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, end, BLOCK_N):
        kpos = start_n + offs_n
        kt = tl.load(K + base + kpos[None, :].to(tl.int64) * HEAD_DIM + offs_d[:, None], mask=kpos[None, :] < end, other=0.0)
        s = tl.where(qpos[:, None] >= kpos[None, :], tl.dot(q, kt) * sm_scale, float("-inf"))
        p = tl.exp(s - m0[:, None])
        l_i += tl.sum(p, axis=1)
        v = tl.load(V + base + kpos[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], mask=kpos[:, None] < end, other=0.0)
        acc += tl.dot(p, v)
    l_i = tl.where(l_i == 0.0, 1.0, l_i)
    tl.store(O + base + qpos[:, None].to(tl.int64) * HEAD_DIM + offs_d[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty),
             mask=qpos[:, None] < S)


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        if q.numel():
            _first_tile_max_kernel[(B * H, triton.cdiv(S, 64))](q, k, v, o, S, 1.0 / math.sqrt(D), HEAD_DIM=D,
                                                                BLOCK_M=64, BLOCK_N=64)
        return o
