"""Reference for gelu_tanh: GELU with the tanh approximation (GPT-2, BERT-era and Gemma MLPs).

``F.gelu(x, approximate="tanh")`` = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
``get_inputs(shape, dtype, device, generator)`` draws x of shape (M, N), standard normal scaled
by 3, so both tails of the activation (gelu(x) -> 0 for x << 0, -> x for x >> 0) and the curved
middle are exercised.
"""

import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    """y = gelu(x, approximate="tanh") for x of shape (M, N)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """x of shape (M, N): 3 * standard normal, in ``dtype``."""
    size = (shape["M"], shape["N"])
    return [(3.0 * torch.randn(size, dtype=torch.float32, device=device, generator=generator)).to(dtype)]
