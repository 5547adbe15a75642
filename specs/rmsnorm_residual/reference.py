"""Reference for rmsnorm_residual: RMSNorm of the residual sum, ``h = x + residual``,
``y = h * rsqrt(mean(h^2, -1) + eps) * weight`` (a pre-norm transformer block's add & norm).

KernelBench-style module: ``Model(*get_init_inputs(shape))`` is the reference; the harness seeds
the RNG identically before building the reference and a candidate, so a candidate that creates
its ``weight`` in the same way gets the same values (drawn at random, not RMSNorm's ones, so a
kernel that skips the scale fails). ``get_inputs(shape, dtype, device, generator)`` draws one
trial's x and residual, both of shape (M, N).
"""

import torch

EPS = 1e-6


class Model(torch.nn.Module):
    """y = h / sqrt(mean(h^2) + eps) * weight per row, h = x + residual, for x, residual of shape (M, N)."""

    def __init__(self, N: int):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * self.weight


# The row length is part of the module (its weight), so each shape fixes it.
def get_init_inputs(shape=None):
    return [(shape or {"N": 4096})["N"]]


def get_inputs(shape, dtype, device, generator):
    """x and residual of shape (M, N), standard normal, in ``dtype``."""
    size = (shape["M"], shape["N"])
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)
            for _ in range(2)]
