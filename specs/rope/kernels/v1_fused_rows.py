"""rope v1: one fused Triton kernel, one (batch, position, head) row per program.

Program r = (b * S + s) * H + h loads the two halves of q's row and of the position's cos and sin
rows, and writes out1 = q1 * cos1 - q2 * sin1 and out2 = q2 * cos2 + q1 * sin2 in float32 (the
rotate_half sign folded into the formula), rounded once. q is read once and out written once;
the cos/sin rows are re-read by each of the H heads of a position (from L2: 2 * D * itemsize
bytes per row against the 2 * D * itemsize of q and out). Half-rows of any length are masked and
walked in chunks of at most MAX_BLOCK elements (one chunk for every realistic head: D <= 2048): a
whole half-row of 2^16 elements in one program's registers took Triton more than 170 s to compile
(rule 12's long head dim, D = 90666; session 25) and spills.
"""

import torch
import triton
import triton.language as tl

#: The longest chunk of a half-row one program holds (elements).
MAX_BLOCK = 1024


@triton.jit
def _rope_row_kernel(Q, COS, SIN, OUT, S, H, D, HALF, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # (b * S + s) * H + h
    pos = (row // H) % S
    for c0 in range(0, HALF, BLOCK):  # one chunk of the half-row at a time
        i = c0 + tl.arange(0, BLOCK)
        m = i < HALF
        q1 = tl.load(Q + row * D + i, mask=m, other=0.0).to(tl.float32)
        q2 = tl.load(Q + row * D + HALF + i, mask=m, other=0.0).to(tl.float32)
        c1 = tl.load(COS + pos * D + i, mask=m, other=0.0).to(tl.float32)
        c2 = tl.load(COS + pos * D + HALF + i, mask=m, other=0.0).to(tl.float32)
        s1 = tl.load(SIN + pos * D + i, mask=m, other=0.0).to(tl.float32)
        s2 = tl.load(SIN + pos * D + HALF + i, mask=m, other=0.0).to(tl.float32)
        tl.store(OUT + row * D + i, (q1 * c1 - q2 * s1).to(OUT.dtype.element_ty), mask=m)
        tl.store(OUT + row * D + HALF + i, (q2 * c2 + q1 * s2).to(OUT.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, num_warps=1):
        super().__init__()
        self.num_warps = num_warps

    def forward(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q, cos, sin = q.contiguous(), cos.contiguous(), sin.contiguous()
        B, S, H, D = q.shape
        out = torch.empty_like(q)
        if out.numel() == 0:
            return out
        half = D // 2
        block = min(triton.next_power_of_2(half), MAX_BLOCK)
        _rope_row_kernel[(B * S * H,)](q, cos, sin, out, S, H, D, half, BLOCK=block,
                                       num_warps=self.num_warps)
        return out
