"""softmax_rows v0: three kernels, three reads of x.

The textbook decomposition: one kernel finds each row's max (written to an (M,) buffer), a second
sums exp(x - max) per row (another (M,) buffer), a third reads x once more and writes
exp(x - max) / sum. Each kernel walks its row in BLOCK_N chunks, so any row length works, but x
crosses DRAM three times: 4 * M * N * itemsize bytes against the 2 * M * N * itemsize the
operation needs. Arithmetic in float32 (an exp accurate to about 1.5 ulp and an IEEE reciprocal,
as PyTorch's softmax has), one rounding at the store.
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
def _row_max_kernel(X, MAX, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK_N], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(X + row * N + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    tl.store(MAX + row, tl.max(m, axis=0))


@triton.jit
def _row_sum_exp_kernel(X, MAX, SUM, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(MAX + row)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(X + row * N + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        s += _exp_nonpositive(x - m)
    tl.store(SUM + row, tl.sum(s, axis=0))


@triton.jit
def _normalise_kernel(X, MAX, SUM, Y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(MAX + row)
    inv = tl.math.div_rn(1.0, tl.load(SUM + row))  # IEEE reciprocal: `/` is div.full.f32 (2 ulp) on NVIDIA
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * N + cols, (_exp_nonpositive(x - m) * inv).to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.BLOCK_N, self.num_warps = BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        row_max = torch.empty(M, dtype=torch.float32, device=x.device)
        row_sum = torch.empty(M, dtype=torch.float32, device=x.device)
        meta = dict(BLOCK_N=self.BLOCK_N, num_warps=self.num_warps)
        _row_max_kernel[(M,)](x, row_max, N, **meta)
        _row_sum_exp_kernel[(M,)](x, row_max, row_sum, N, **meta)
        _normalise_kernel[(M,)](x, row_max, row_sum, y, N, **meta)
        return y
