"""Reference for softmax_rows: softmax over the last dim of a 2D tensor, ``torch.softmax(x, dim=-1)``.

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its
constructor arguments (none), ``get_inputs(shape, dtype, device, generator)`` draws fresh inputs
for one trial (shape is ``{"M": rows, "N": row length}``).
"""

import torch


class Model(torch.nn.Module):
    """y[i, :] = exp(x[i, :] - max_j x[i, j]) / sum_j exp(x[i, j] - max_j x[i, j]) for x of shape (M, N)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N): standard normal times 2 (logit-like spread: the largest entry of
    a row of 8192 is about exp(7) times its median, so the normalisation matters), in ``dtype``."""
    size = (shape["M"], shape["N"])
    return [(2.0 * torch.randn(size, dtype=torch.float32, device=device, generator=generator)).to(dtype)]
