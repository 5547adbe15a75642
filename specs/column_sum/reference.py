"""Reference for column_sum: the sum over rows of a 2D tensor, ``x.sum(dim=0)`` (a bias gradient,
the batch reduction of a norm's statistics).

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its constructor
arguments (none), ``get_inputs(shape, dtype, device, generator)`` draws one trial's x of shape
(M, N) (``{"M": rows, "N": columns}``).
"""

import math

import torch


class Model(torch.nn.Module):
    """y[j] = sum_i x[i, j] for x of shape (M, N); y has shape (N,)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=0)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N): standard normal divided by sqrt(M), so every column sum is of
    size 1 whatever M (a fixed absolute tolerance then means the same on every shape), in ``dtype``."""
    size = (shape["M"], shape["N"])
    x = torch.randn(size, dtype=torch.float32, device=device, generator=generator) / math.sqrt(shape["M"])
    return [x.to(dtype)]
