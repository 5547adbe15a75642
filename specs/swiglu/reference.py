"""Reference for swiglu: the gate of a SwiGLU feed-forward block, ``silu(a) * b``.

In Llama-style MLPs ``a = x @ W_gate`` and ``b = x @ W_up`` are two (tokens, intermediate)
activations; this task is the elementwise step between the two GEMMs and the down projection.
``get_inputs(shape, dtype, device, generator)`` draws a and b of shape (M, N), standard normal.
"""

import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    """out = silu(a) * b = a * sigmoid(a) * b for a, b of shape (M, N)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.silu(a) * b


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """a and b of shape (M, N), standard normal, in ``dtype``."""
    size = (shape["M"], shape["N"])
    a = torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)
    b = torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)
    return [a, b]
