"""Reference for layernorm: LayerNorm over the last dim with a weight and a bias,
``F.layer_norm(x, (N,), weight, bias, eps=1e-5)``.

KernelBench-style module: ``Model(*get_init_inputs(shape))`` is the reference; the harness seeds
the RNG identically before building the reference and a candidate, so a candidate that creates
its ``weight`` and ``bias`` in the same way gets the same values. They are drawn at random (not
LayerNorm's ones and zeros), so a kernel that skips the affine step fails.
``get_inputs(shape, dtype, device, generator)`` draws one trial's x of shape (M, N).
"""

import torch
import torch.nn.functional as F

EPS = 1e-5


class Model(torch.nn.Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias per row of x (M, N); biased variance."""

    def __init__(self, N: int):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, EPS)


# The row length is part of the module (its weight and bias), so each shape fixes it.
def get_init_inputs(shape=None):
    return [(shape or {"N": 4096})["N"]]


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N): standard normal plus 1 (a row mean a kernel must remove), in ``dtype``."""
    size = (shape["M"], shape["N"])
    return [(torch.randn(size, dtype=torch.float32, device=device, generator=generator) + 1.0).to(dtype)]
