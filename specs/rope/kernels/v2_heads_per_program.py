"""rope v2: Triton, one program per (batch, position), BLOCK_H heads per tile, cos/sin loaded once.

Program p = b * S + s loads the position's cos and sin rows once into registers and walks the
position's H heads BLOCK_H at a time as (BLOCK_H, D/2) tiles of each half of q, broadcasting the
table rows over the heads. Against v1: the table rows are read once per position instead of once
per head (H times fewer table loads and address computations), each program moves H * D
elements (Llama: 32 x 128 = 4096) instead of D, and the grid is H times shorter, so more bytes
are in flight per program. q is read once and out written once; float32 math, one rounding.
A half-row longer than the tile allows (BLOCK_H * BLOCK <= MAX_TILE elements; Llama's D = 128 is one
chunk) is walked in chunks, the tables' chunk loaded once per position for all heads: a
(32, 2^16) tile for rule 12's long head dim did not finish compiling (session 25).
"""

import torch
import triton
import triton.language as tl

#: The most elements of one (BLOCK_H, BLOCK) tile of a half of q.
MAX_TILE = 8192


@triton.jit
def _rope_heads_kernel(Q, COS, SIN, OUT, S, H, D, HALF, BLOCK_H: tl.constexpr, BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)  # b * S + s
    pos = p % S
    for c0 in range(0, HALF, BLOCK):  # one chunk of the half-row at a time (one for realistic heads)
        i = c0 + tl.arange(0, BLOCK)
        m = i < HALF
        c1 = tl.load(COS + pos * D + i, mask=m, other=0.0).to(tl.float32)[None, :]
        c2 = tl.load(COS + pos * D + HALF + i, mask=m, other=0.0).to(tl.float32)[None, :]
        s1 = tl.load(SIN + pos * D + i, mask=m, other=0.0).to(tl.float32)[None, :]
        s2 = tl.load(SIN + pos * D + HALF + i, mask=m, other=0.0).to(tl.float32)[None, :]
        for h0 in range(0, H, BLOCK_H):
            h = h0 + tl.arange(0, BLOCK_H)
            mask = (h < H)[:, None] & m[None, :]
            offs = (p * H + h)[:, None] * D + i[None, :]
            q1 = tl.load(Q + offs, mask=mask, other=0.0).to(tl.float32)
            q2 = tl.load(Q + offs + HALF, mask=mask, other=0.0).to(tl.float32)
            tl.store(OUT + offs, (q1 * c1 - q2 * s1).to(OUT.dtype.element_ty), mask=mask)
            tl.store(OUT + offs + HALF, (q2 * c2 + q1 * s2).to(OUT.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_H=32, num_warps=4):
        super().__init__()
        self.BLOCK_H, self.num_warps = BLOCK_H, num_warps

    def forward(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q, cos, sin = q.contiguous(), cos.contiguous(), sin.contiguous()
        B, S, H, D = q.shape
        out = torch.empty_like(q)
        if out.numel() == 0:
            return out
        half = D // 2
        block_h = min(self.BLOCK_H, triton.next_power_of_2(H))
        block = min(triton.next_power_of_2(half), max(16, MAX_TILE // block_h))
        _rope_heads_kernel[(B * S,)](q, cos, sin, out, S, H, D, half, BLOCK_H=block_h,
                                     BLOCK=block, num_warps=self.num_warps)
        return out
