"""layernorm v1: one program per row, the row in registers, one read and one write.

The row is loaded once as a BLOCK_N = next_power_of_2(N) vector and kept in float32 registers,
so the variance can be taken exactly around the mean (two reductions over registers, no second
read and none of the cancellation of sum/sum-of-squares), then normalised, scaled and shifted
and stored: 2 * M * N * itemsize bytes of DRAM traffic, half of v0's, in one launch. Weight and
bias are read by every row (from L2 after the first rows).

Rows longer than MAX_BLOCK_N (16384 elements: 64 float32 registers per thread with 8 warps) take
a chunked path in the same kernel -- the mean, then the variance around it, then the affine
store, each a loop over CHUNK-element pieces, the second and third reads of the row served
mostly from L2 --, so no program holds more than MAX_BLOCK_N elements: a 2^17-lane row took
40 s to compile with 4 warps (session 26) and spills its registers.
"""

import torch
import triton
import triton.language as tl

EPS = 1e-5
#: the longest row held in registers (a power of two); longer rows take the chunked path
MAX_BLOCK_N = 16384
#: the chunk of the long-row path
CHUNK = 4096


@triton.jit
def _layernorm_row_kernel(X, W, B, Y, N, eps, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    if ONE_TILE:  # the whole row in registers: one read
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        d = tl.where(mask, x - mean, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * N + cols, (d * rstd * w + b).to(Y.dtype.element_ty), mask=mask)
    else:  # long rows: mean, variance around it, affine store -- three loops over BLOCK_N chunks
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            acc += tl.load(X + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / N
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            mask = cols < N
            d = tl.where(mask, tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            mask = cols < N
            x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(Y + row * N + cols, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, N, num_warps=8):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))
        self.num_warps = num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        one_tile = triton.next_power_of_2(N) <= MAX_BLOCK_N
        _layernorm_row_kernel[(M,)](x, self.weight, self.bias, y, N, EPS,
                                    BLOCK_N=triton.next_power_of_2(N) if one_tile else CHUNK, ONE_TILE=one_tile,
                                    num_warps=self.num_warps)
        return y
