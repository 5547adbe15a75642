"""Reference for flip2d: reverse the columns of a 2D tensor, ``torch.flip(x, dims=[1])``.

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its
constructor arguments, ``get_inputs(shape, dtype, device, generator)`` draws fresh inputs
for one trial (shape is ``{"M": rows, "N": columns}``).
"""

import torch


class Model(torch.nn.Module):
    """y[i, j] = x[i, N - 1 - j] for x of shape (M, N), any dtype."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=[1])


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N): standard normal for floats, the full value range for ints."""
    size = (shape["M"], shape["N"])
    if dtype.is_floating_point:
        x = torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(info.min, info.max, size, dtype=dtype, device=device, generator=generator)
    return [x]
