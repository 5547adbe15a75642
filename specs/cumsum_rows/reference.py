"""Reference for cumsum_rows: the inclusive prefix sum of each row of a 2D tensor,
``torch.cumsum(x, dim=1)``.

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its (empty)
constructor arguments, ``get_inputs(shape, dtype, device, generator)`` draws one trial's input
(shape is ``{"M": rows, "N": columns}``). The output has x's shape and dtype:
``y[i, j] = x[i, 0] + ... + x[i, j]``.
"""

import torch


class Model(torch.nn.Module):
    """y = torch.cumsum(x, dim=1) for x of shape (M, N)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N), standard normal (zero mean: the prefix sums wander around zero
    like a random walk, so outputs near zero, where only a float32-accurate sum passes, are common)."""
    size = (shape["M"], shape["N"])
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)]
