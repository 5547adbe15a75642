"""Reference for transpose2d: a materialised 2D transpose, ``x.t().contiguous()``.

KernelBench-style module: ``get_inputs(shape, dtype, device, generator)`` draws x of shape
(M, N); the output is the (N, M) contiguous tensor y with y[j, i] = x[i, j].
"""

import torch


class Model(torch.nn.Module):
    """y = x.t().contiguous() for x of shape (M, N), always a new tensor: y has shape (N, M), row-major."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # a fresh tensor: .contiguous() returns x itself when x.t() is already contiguous (an
        # (M, N) tensor with M or N equal to 1), and an output sharing an input's storage is a
        # wrong output (VERIFICATION.md, the aliasing rule)
        return x.t().clone(memory_format=torch.contiguous_format)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N): standard normal for floats, the full value range for ints."""
    size = (shape["M"], shape["N"])
    if dtype.is_floating_point:
        return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)]
    info = torch.iinfo(dtype)
    return [torch.randint(info.min, info.max, size, dtype=dtype, device=device, generator=generator)]
