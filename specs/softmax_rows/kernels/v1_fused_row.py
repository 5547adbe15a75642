"""softmax_rows v1: one program per row, the whole row in registers, one read and one write.

The row is loaded once as a BLOCK_N = next_power_of_2(N) vector (masked lanes read -inf, so they
add exp(-inf) = 0 to the sum), reduced to its max and to the sum of exp(x - max) in float32
registers, and written once: 2 * M * N * itemsize bytes, half of v0's traffic, and one kernel
launch instead of three. The row must fit in the registers of one program (BLOCK_N elements over
num_warps * 32 threads): 8192 float32 over 8 warps is 32 registers per thread. Float32 data take
an exp accurate to about 1.5 ulp and an IEEE reciprocal of the sum (Triton's tl.exp and `/` are
approximate on NVIDIA GPUs, measurably less precise than PyTorch's softmax); 2-byte data take tl.exp,
whose error is far below their rounding at the store.

Rows longer than MAX_BLOCK_N (16384 elements) take a chunked path in the same kernel: one loop
over CHUNK-element pieces keeps a running maximum and a running sum of exp(x - max) per lane
(rescaled when the lane's maximum grows: the online softmax of Milakov and Gimelshein, 2018),
the lanes are combined, and a second loop re-reads the row (mostly from L2) and stores. So no
program holds more than MAX_BLOCK_N elements: whole-row kernels of 2^17 lanes took 40 s to
compile with 4 warps (layernorm v1, session 26).
"""

import torch
import triton
import triton.language as tl

#: the longest row held in registers (a power of two); longer rows take the chunked path
MAX_BLOCK_N = 16384
#: the chunk of the long-row path (the long path needs N > CHUNK: its first chunk is full)
CHUNK = 4096


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
def _exp_le0(x, ACCURATE_EXP: tl.constexpr):
    if ACCURATE_EXP:  # float32 data
        return _exp_nonpositive(x)
    else:  # 2-byte data: ex2.approx's error is far below their rounding at the store
        return tl.exp(x)


@triton.jit
def _softmax_row_kernel(X, Y, N, BLOCK_N: tl.constexpr, ACCURATE_EXP: tl.constexpr, ONE_TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    if ONE_TILE:  # the whole row in registers: one read
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * N + cols, mask=mask, other=float("-inf")).to(tl.float32)
        e = _exp_le0(x - tl.max(x, axis=0), ACCURATE_EXP)
        y = e * tl.math.div_rn(1.0, tl.sum(e, axis=0))  # IEEE reciprocal: `/` is div.full.f32 (2 ulp) on NVIDIA
        tl.store(Y + row * N + cols, y.to(Y.dtype.element_ty), mask=mask)
    else:  # long rows (N > BLOCK_N): per-lane running max and sum, then a second read to store
        cols = tl.arange(0, BLOCK_N)
        m = tl.load(X + row * N + cols).to(tl.float32)  # the first chunk is full: every lane finite
        s = tl.full([BLOCK_N], 1.0, tl.float32)
        for n0 in range(BLOCK_N, N, BLOCK_N):
            c = n0 + cols
            x = tl.load(X + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, x)
            empty = m_new == float("-inf")  # the lane has seen only -inf so far: keep its (m, s) = (-inf, 1)
            s = tl.where(empty, s, s * _exp_le0(m - m_new, ACCURATE_EXP) + _exp_le0(x - m_new, ACCURATE_EXP))
            m = m_new
        row_max = tl.max(m, axis=0)
        inv = tl.math.div_rn(1.0, tl.sum(tl.where(m == float("-inf"), 0.0, s * _exp_le0(m - row_max, ACCURATE_EXP)),
                                         axis=0))
        for n0 in range(0, N, BLOCK_N):
            c = n0 + cols
            mask = c < N
            x = tl.load(X + row * N + c, mask=mask, other=float("-inf")).to(tl.float32)
            y = _exp_le0(x - row_max, ACCURATE_EXP) * inv
            tl.store(Y + row * N + c, y.to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, num_warps=8):
        super().__init__()
        self.num_warps = num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        one_tile = triton.next_power_of_2(N) <= MAX_BLOCK_N
        _softmax_row_kernel[(M,)](x, y, N, BLOCK_N=triton.next_power_of_2(N) if one_tile else CHUNK,
                                  ACCURATE_EXP=x.dtype == torch.float32, ONE_TILE=one_tile, num_warps=self.num_warps)
        return y
