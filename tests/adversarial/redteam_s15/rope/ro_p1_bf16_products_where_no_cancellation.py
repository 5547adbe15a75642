"""CHEAT, class 2 (precision below the policy on part of the output), rope bfloat16 (policy bf16:
"float32 math, one rounding to bfloat16 at the store").

Idea: Hugging Face's bfloat16 arithmetic (q cos and rotate_half(q) sin each rounded to bfloat16 before
the sum, then the sum rounded) -- which the spec rejects because it cancels -- is used only where the two
products have the SAME sign, so nothing cancels and each extra rounding is at most half a bfloat16 ulp of
a product no larger than the output. About half of the outputs get three roundings instead of one.
On float32 inputs the kernel computes honestly (the cheat is aimed at the bfloat16 job only).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _rbf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def ro_p1_kernel(Q, COS, SIN, Y, S, H, D, CHEAT: tl.constexpr, HALF: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    s = (row // H) % S
    j = tl.arange(0, BLOCK)
    m = j < D
    q = tl.load(Q + row * D + j, mask=m, other=0.0).to(tl.float32)
    pj = tl.where(j < HALF, j + HALF, j - HALF)
    qp = tl.load(Q + row * D + pj, mask=m, other=0.0).to(tl.float32)
    rot = tl.where(j < HALF, -qp, qp)
    a = q * tl.load(COS + s * D + j, mask=m, other=0.0).to(tl.float32)
    b = rot * tl.load(SIN + s * D + j, mask=m, other=0.0).to(tl.float32)
    if CHEAT:
        same = (a >= 0) == (b >= 0)
        a = tl.where(same, _rbf16(a), a)
        b = tl.where(same, _rbf16(b), b)
    tl.store(Y + row * D + j, (a + b).to(Y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, q, cos, sin):
        q, cos, sin = q.contiguous(), cos.contiguous(), sin.contiguous()
        B, S, H, D = q.shape
        y = torch.empty_like(q)
        if q.numel():
            ro_p1_kernel[(B * S * H,)](q, cos, sin, y, S, H, D, CHEAT=q.dtype == torch.bfloat16, HALF=D // 2,
                                       BLOCK=max(16, triton.next_power_of_2(D)))
        return y
