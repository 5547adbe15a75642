"""softmax_rows v1: one program per row, the whole row in registers, one read and one write.

The row is loaded once as a BLOCK_N = next_power_of_2(N) vector (masked lanes read -inf, so they
add exp(-inf) = 0 to the sum), reduced to its max and to the sum of exp(x - max) in float32
registers, and written once: 2 * M * N * itemsize bytes, half of v0's traffic, and one kernel
launch instead of three. The row must fit in the registers of one program (BLOCK_N elements over
num_warps * 32 threads): 8192 float32 over 8 warps is 32 registers per thread. Float32 data take
an exp accurate to about 1.5 ulp and an IEEE reciprocal of the sum (Triton's tl.exp and `/` are
approximate on NVIDIA GPUs, measurably less precise than PyTorch's softmax); 2-byte data take tl.exp,
whose error is far below their rounding at the store.
"""

import torch
import triton
import triton.language as tl


# exp(x) for x <= 0 to about 1.5 ulp in float32 (tl.exp is ex2.approx of x * log2(e) on NVIDIA GPUs,
# whose relative error grows with |x|: a float32 softmax built on it is measurably less precise than
# PyTorch's expf-based one, and the precision rule -- VERIFICATION.md rule 23 -- compares the two).
# Cody-Waite reduction x = k ln2 + r, |r| <= ln2 / 2 (k * LN2_HI is exact for |k| <= 127), a degree-7
# Taylor polynomial of exp(r) (truncation error below 6e-9) and 2^k built from its exponent bits;
# below -87 (under float32's smallest normal) the result is 0.
@triton.jit
def _exp_nonpositive(x):
    xc = tl.maximum(x, -88.0)  # finite (masked lanes hold -inf): no NaN on the way to the select
    k = tl.floor(xc * 1.4426950408889634 + 0.5)
    r = (xc - k * 0.693145751953125) - k * 1.428606765330187e-06
    p = r * (1.0 / 5040) + (1.0 / 720)
    p = p * r + (1.0 / 120)
    p = p * r + (1.0 / 24)
    p = p * r + (1.0 / 6)
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    scale = ((tl.maximum(k, -126.0).to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True)
    return tl.where(x < -87.0, 0.0, p * scale)


@triton.jit
def _softmax_row_kernel(X, Y, N, BLOCK_N: tl.constexpr, ACCURATE_EXP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=float("-inf")).to(tl.float32)
    if ACCURATE_EXP:  # float32 data
        e = _exp_nonpositive(x - tl.max(x, axis=0))
    else:  # 2-byte data: ex2.approx's error is far below their rounding at the store
        e = tl.exp(x - tl.max(x, axis=0))
    y = e * tl.math.div_rn(1.0, tl.sum(e, axis=0))  # IEEE reciprocal: `/` is div.full.f32 (2 ulp) on NVIDIA
    tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, num_warps=8):
        super().__init__()
        self.num_warps = num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        _softmax_row_kernel[(M,)](x, y, N, BLOCK_N=triton.next_power_of_2(N),
                                  ACCURATE_EXP=x.dtype == torch.float32, num_warps=self.num_warps)
        return y
