"""quantize_int8_rows v2: one Triton kernel, each row read once and kept in registers.

When a row fits in one tile (N <= MAX_BLOCK_N: 8192-16384 elements, 32-64 per thread with 8
warps), a program loads BLOCK_M whole rows, reduces each row's absmax across its threads, and
quantizes the values it already holds: x crosses DRAM once (M * N * itemsize) and q is written
once (M * N bytes) -- the compulsory traffic, two thirds of v1's in bfloat16 -- in one launch, with
no absmax buffer. Short rows are packed BLOCK_M to a program so programs stay large. Rows longer
than MAX_BLOCK_N take a two-loop path in the same kernel (absmax, then quantize), whose second
read of the row is served mostly from L2, since the program read it just before.

Arithmetic as v1: IEEE divisions (``tl.math.div_rn``), round half to even, non-finite values as 0.
"""

import torch
import triton
import triton.language as tl

FLT_MAX = 3.4028234663852886e38


@triton.jit
def _finite_or_zero(x, FMAX: tl.constexpr):
    return tl.where(tl.abs(x) <= FMAX, x, 0.0)


@triton.jit
def _round_half_even(v):
    r = tl.floor(v + 0.5)
    odd = (r.to(tl.int32) & 1) != 0
    return tl.where(((r - v) == 0.5) & odd, r - 1.0, r)


@triton.jit
def _quantize(x, scale):
    return tl.minimum(tl.maximum(_round_half_even(tl.math.div_rn(x, scale)), -127.0), 127.0).to(tl.int8)


@triton.jit
def _quantize_rows_kernel(X, Q, M, N, FMAX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          ONE_TILE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    in_rows = rows[:, None] < M
    if ONE_TILE:  # the whole row in registers: one read of x
        cols = tl.arange(0, BLOCK_N)
        mask = in_rows & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        x = _finite_or_zero(tl.load(X + offs, mask=mask, other=0.0).to(tl.float32), FMAX)
        absmax = tl.maximum(tl.max(tl.abs(x), axis=1), 1e-5)
        scale = tl.math.div_rn(absmax, 127.0)
        tl.store(Q + offs, _quantize(x, scale[:, None]), mask=mask)
    else:  # long rows: absmax loop, then a quantize loop that re-reads the row (mostly from L2)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            mask = in_rows & (cols[None, :] < N)
            x = tl.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            acc = tl.maximum(acc, tl.abs(_finite_or_zero(x, FMAX)))
        scale = tl.math.div_rn(tl.maximum(tl.max(acc, axis=1), 1e-5), 127.0)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            mask = in_rows & (cols[None, :] < N)
            offs = rows[:, None] * N + cols[None, :]
            x = _finite_or_zero(tl.load(X + offs, mask=mask, other=0.0).to(tl.float32), FMAX)
            tl.store(Q + offs, _quantize(x, scale[:, None]), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, MAX_BLOCK_N=8192, num_warps=8):
        super().__init__()
        self.MAX_BLOCK_N, self.num_warps = MAX_BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        q = torch.empty((M, N), dtype=torch.int8, device=x.device)
        if q.numel() == 0:
            return q
        one_tile = triton.next_power_of_2(N) <= self.MAX_BLOCK_N
        block_n = triton.next_power_of_2(N) if one_tile else self.MAX_BLOCK_N
        block_m = max(1, min(16, 2048 // block_n))  # pack short rows: at least ~2048 elements per program
        _quantize_rows_kernel[(triton.cdiv(M, block_m),)](x, q, M, N, FMAX=FLT_MAX, BLOCK_M=block_m, BLOCK_N=block_n,
                                                          ONE_TILE=one_tile, num_warps=self.num_warps)
        return q
