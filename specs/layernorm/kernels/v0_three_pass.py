"""layernorm v0: three kernels, three reads of x.

A direct port of the formula: one kernel computes each row's mean, a second its biased variance
around that mean, a third normalises and applies weight and bias. Each walks its row in BLOCK_N
chunks, so any row length works, and accumulates in float32; but x crosses DRAM three times:
4 * M * N * itemsize bytes (plus weight and bias) against the 2 * M * N * itemsize needed.
"""

import torch
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def _row_mean_kernel(X, MEAN, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(X + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(MEAN + row, tl.sum(acc, axis=0) / N)


@triton.jit
def _row_rstd_kernel(X, MEAN, RSTD, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mean = tl.load(MEAN + row)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        d = tl.where(mask, tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
        acc += d * d
    tl.store(RSTD + row, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps))


@triton.jit
def _normalise_kernel(X, W, B, MEAN, RSTD, Y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mean = tl.load(MEAN + row)
    rstd = tl.load(RSTD + row)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + row * N + cols, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, N, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))
        self.BLOCK_N, self.num_warps = BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        mean = torch.empty(M, dtype=torch.float32, device=x.device)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        meta = dict(BLOCK_N=self.BLOCK_N, num_warps=self.num_warps)
        _row_mean_kernel[(M,)](x, mean, N, **meta)
        _row_rstd_kernel[(M,)](x, mean, rstd, N, EPS, **meta)
        _normalise_kernel[(M,)](x, self.weight, self.bias, mean, rstd, y, N, **meta)
        return y
