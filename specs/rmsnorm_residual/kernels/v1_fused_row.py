"""rmsnorm_residual v1: one Triton program per row; add, reduce, scale in float32 registers.

The program loads its row of x and of residual once (BLOCK_N = next_power_of_2(N), masked),
forms h = x + residual in float32, reduces sum(h^2) in registers, and stores h * rstd * weight:
x and residual are read once and y written once, 3 * M * N * itemsize bytes, with no
intermediate in DRAM and one rounding to the element type at the store (eager rounds h, h^2, the
mean and every product).
"""

import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def _rmsnorm_residual_row_kernel(X, R, W, Y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    h = (tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
         + tl.load(R + row * N + cols, mask=mask, other=0.0).to(tl.float32))
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / N + eps)
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
        _rmsnorm_residual_row_kernel[(M,)](x, residual, self.weight, y, N, EPS,
                                           BLOCK_N=triton.next_power_of_2(N), num_warps=self.num_warps)
        return y
