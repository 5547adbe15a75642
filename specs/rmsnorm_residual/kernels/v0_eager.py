"""rmsnorm_residual v0: eager PyTorch, the reference's own operators.

Add, square, mean, add eps, rsqrt, two multiplies: about seven kernels, each reading and writing
(M, N) or (M, 1) tensors in the element type, so the sum h crosses DRAM several times and every
intermediate is rounded to the element type. The starting point of the ladder.
"""

import torch

EPS = 1e-6


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * self.weight
