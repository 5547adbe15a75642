"""Reference for softmax_backward: the gradient of a row softmax with respect to its input,
``dx = y * (dy - sum(dy * y, dim=-1))`` (what autograd runs after ``torch.softmax(x, -1)``).

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its constructor
arguments (none), ``get_inputs(shape, dtype, device, generator)`` draws one trial's softmax output
y (rows of a softmax of standard normal x 2, so they sum to 1) and upstream gradient dy, both of
shape (M, N).
"""

import torch


class Model(torch.nn.Module):
    """dx[i, j] = y[i, j] * (dy[i, j] - sum_k dy[i, k] * y[i, k]) for y, dy of shape (M, N)."""

    def forward(self, y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        # in float32 (float64 stays float64), one rounding to the input dtype at the end: eager
        # PyTorch on bfloat16 tensors rounds dy * y, the row sum and dy - sum, and the rounded sum
        # cancels against dy (errors of 4e-5 on dx of 8e-4), outside the task's tolerance
        f = torch.promote_types(y.dtype, torch.float32)
        yf, dyf = y.to(f), dy.to(f)
        return (yf * (dyf - (dyf * yf).sum(dim=-1, keepdim=True))).to(y.dtype)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """y = softmax(2 * randn) over rows (computed in float32, then rounded to ``dtype``) and
    dy = randn, both (M, N)."""
    size = (shape["M"], shape["N"])
    x = 2.0 * torch.randn(size, dtype=torch.float32, device=device, generator=generator)
    dy = torch.randn(size, dtype=torch.float32, device=device, generator=generator)
    return [torch.softmax(x, dim=-1).to(dtype), dy.to(dtype)]
