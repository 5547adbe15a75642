"""rmsnorm_residual v1: one Triton program per row; add, reduce, scale in float32 registers.

The program loads its row of x and of residual once (BLOCK_N = next_power_of_2(N), masked),
forms h = x + residual in float32, reduces sum(h^2) in registers, and stores h * rstd * weight:
x and residual are read once and y written once, 3 * M * N * itemsize bytes, with no
intermediate in DRAM and one rounding to the element type at the store (eager rounds h, h^2, the
mean and every product).

Rows longer than MAX_BLOCK_N (16384 elements) take a chunked path in the same kernel -- sum(h^2)
in a loop over CHUNK-element pieces, then a second loop that re-forms h (its reads mostly from L2)
and stores --, so no program holds more than MAX_BLOCK_N elements: whole-row kernels of 2^17 lanes
took 40 s to compile with 4 warps (layernorm v1, session 26).
"""

import torch
import triton
import triton.language as tl

EPS = 1e-6
#: the longest row held in registers (a power of two); longer rows take the chunked path
MAX_BLOCK_N = 16384
#: the chunk of the long-row path
CHUNK = 4096


@triton.jit
def _rmsnorm_residual_row_kernel(X, R, W, Y, N, eps, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    if ONE_TILE:  # the whole row in registers: one read of x and residual
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        h = (tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
             + tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32))
        rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / N + eps)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)
    else:  # long rows: sum(h^2) over chunks, then h re-formed and stored
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            mask = cols < N
            h = (tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
                 + tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32))
            acc += h * h
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        for n0 in range(0, N, BLOCK_N):
            cols = n0 + tl.arange(0, BLOCK_N)
            mask = cols < N
            h = (tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
                 + tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32))
            w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(Y + row * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, N, num_warps=8):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.num_warps = num_warps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        one_tile = triton.next_power_of_2(N) <= MAX_BLOCK_N
        _rmsnorm_residual_row_kernel[(M,)](x, residual, self.weight, y, N, EPS,
                                           BLOCK_N=triton.next_power_of_2(N) if one_tile else CHUNK,
                                           ONE_TILE=one_tile, num_warps=self.num_warps)
        return y
