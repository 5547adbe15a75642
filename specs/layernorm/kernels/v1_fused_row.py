"""layernorm v1: one program per row, the row in registers, one read and one write.

The row is loaded once as a BLOCK_N = next_power_of_2(N) vector and kept in float32 registers,
so the variance can be taken exactly around the mean (two reductions over registers, no second
read and none of the cancellation of sum/sum-of-squares), then normalised, scaled and shifted
and stored: 2 * M * N * itemsize bytes of DRAM traffic, half of v0's, in one launch. Weight and
bias are read by every row (from L2 after the first rows).
"""

import torch
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def _layernorm_row_kernel(X, W, B, Y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * N + cols, (d * rstd * w + b).to(Y.dtype.element_ty), mask=mask)


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
        _layernorm_row_kernel[(M,)](x, self.weight, self.bias, y, N, EPS, BLOCK_N=triton.next_power_of_2(N),
                                    num_warps=self.num_warps)
        return y
