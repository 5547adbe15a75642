"""Reference for cumsum_rows: the inclusive prefix sum of each row of a 2D tensor,
``torch.cumsum(x, dim=1)`` with float32 accumulation.

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its (empty)
constructor arguments, ``get_inputs(shape, dtype, device, generator)`` draws one trial's input
(shape is ``{"M": rows, "N": columns}``). The output has x's shape and dtype:
``y[i, j] = x[i, 0] + ... + x[i, j]``.
"""

import torch


class Model(torch.nn.Module):
    """y = torch.cumsum(x, dim=1) for x of shape (M, N), accumulated in float32 (float64 stays
    float64) and rounded once to x's dtype.

    The accumulation dtype is explicit because CUDA's ``torch.cumsum`` of a bfloat16 tensor adds in
    bfloat16 (each partial sum rounded: an error of about 5e-3 after six columns),
    which the task's own bfloat16 tolerance rejects; the CPU adds in float32."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1, dtype=torch.promote_types(x.dtype, torch.float32)).to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N), standard normal (zero mean: the prefix sums wander around zero
    like a random walk, so outputs near zero, where only a float32-accurate sum passes, are common)."""
    size = (shape["M"], shape["N"])
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)]
