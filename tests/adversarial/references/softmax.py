"""Reference for the adversarial softmax task: ``torch.softmax(x, dim=-1)`` over rows.

Wide rows of standard-normal logits make every output small (~1/N), the regime where a loose
absolute tolerance accepts zeros. ``shape`` is ``{"M": rows, "N": columns}``.
"""

import torch


class Model(torch.nn.Module):
    """y[i, j] = exp(x[i, j]) / sum_k exp(x[i, k]) for x of shape (M, N), floating dtypes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N), standard normal."""
    x = torch.randn((shape["M"], shape["N"]), dtype=torch.float32, device=device, generator=generator)
    return [x.to(dtype)]
