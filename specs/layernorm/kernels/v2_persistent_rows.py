"""layernorm v2: persistent programs, ROWS rows per step, weight and bias loaded once per program.

v1 launches one program per row and every program reads weight and bias again: 2 * N * itemsize
bytes of L2 traffic per row, twice the row's own read. Here the grid is a few programs per SM (at most the
number of row blocks); each loads weight and bias once into float32 registers and then loops over
row blocks pid, pid + P, pid + 2P, ..., normalising a ROWS x BLOCK_N tile per step (ROWS > 1
fills the warps when rows are short). DRAM traffic stays 2 * M * N * itemsize; L2 traffic for the
affine parameters drops from M to P rows' worth, and there is one wave of programs, no tail.

A ROWS x next_power_of_2(N) tile of more than MAX_TILE (16384) elements is not held in registers:
those rows take a chunked path (mean, variance around it, affine store, each a loop over
CHUNK-element pieces of ROWS rows; weight and bias read per chunk, from L2), so no program holds
more than MAX_TILE elements -- a 2^17-lane tile took 40 s to compile with 4 warps (session 26).
"""

import torch
import triton
import triton.language as tl

EPS = 1e-5
#: programs per SM of the persistent grid (several, so loads of one program overlap another's math)
PROGRAMS_PER_SM = 4
#: the largest ROWS x BLOCK_N tile held in registers (a power of two); larger rows take the chunked path
MAX_TILE = 16384
#: the long-row path's tile (ROWS x CHUNK // ROWS elements)
CHUNK = 4096


@triton.jit
def _layernorm_persistent_kernel(X, W, B, Y, M, N, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr,
                                 ONE_TILE: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    n_blocks = tl.cdiv(M, ROWS)
    if ONE_TILE:  # weight and bias in registers once; each step a ROWS x BLOCK_N tile of whole rows
        cmask = cols < N
        w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
        b = tl.load(B + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
        for blk in range(pid, n_blocks, nprog):
            rows = (blk * ROWS + tl.arange(0, ROWS)).to(tl.int64)
            mask = (rows < M)[:, None] & cmask[None, :]
            offs = rows[:, None] * N + cols[None, :]
            x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
            mean = tl.sum(x, axis=1) / N
            d = tl.where(mask, x - mean[:, None], 0.0)
            rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / N + eps)
            tl.store(Y + offs, (d * rstd[:, None] * w + b).to(Y.dtype.element_ty), mask=mask)
    else:  # long rows: mean, variance around it, affine store -- three loops over ROWS x BLOCK_N chunks
        for blk in range(pid, n_blocks, nprog):
            rows = (blk * ROWS + tl.arange(0, ROWS)).to(tl.int64)
            rmask = (rows < M)[:, None]
            acc = tl.zeros([ROWS, BLOCK_N], dtype=tl.float32)
            for n0 in range(0, N, BLOCK_N):
                c = n0 + cols
                acc += tl.load(X + rows[:, None] * N + c[None, :], mask=rmask & (c < N)[None, :], other=0.0
                               ).to(tl.float32)
            mean = tl.sum(acc, axis=1) / N
            acc = tl.zeros([ROWS, BLOCK_N], dtype=tl.float32)
            for n0 in range(0, N, BLOCK_N):
                c = n0 + cols
                mask = rmask & (c < N)[None, :]
                x = tl.load(X + rows[:, None] * N + c[None, :], mask=mask, other=0.0).to(tl.float32)
                d = tl.where(mask, x - mean[:, None], 0.0)
                acc += d * d
            rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / N + eps)
            for n0 in range(0, N, BLOCK_N):
                c = n0 + cols
                mask = rmask & (c < N)[None, :]
                offs = rows[:, None] * N + c[None, :]
                x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
                w = tl.load(W + c, mask=c < N, other=0.0).to(tl.float32)[None, :]
                b = tl.load(B + c, mask=c < N, other=0.0).to(tl.float32)[None, :]
                y = (x - mean[:, None]) * rstd[:, None] * w + b
                tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, N, ROWS=1, num_warps=8):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))
        self.ROWS, self.num_warps = ROWS, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 1
        grid = (max(1, min(triton.cdiv(M, self.ROWS), PROGRAMS_PER_SM * sms)),)
        one_tile = self.ROWS * triton.next_power_of_2(N) <= MAX_TILE
        block_n = triton.next_power_of_2(N) if one_tile else max(16, CHUNK // self.ROWS)
        _layernorm_persistent_kernel[grid](x, self.weight, self.bias, y, M, N, EPS, ROWS=self.ROWS,
                                           BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=self.num_warps)
        return y
