"""Reference for quantize_int8_rows: row-wise (per-token) symmetric int8 quantization.

The recipe of per-token activation quantization (SmoothQuant's ``quantize_per_tensor_absmax``
per row; LLM.int8()'s row-wise absmax): for each row of x (M, N),

    absmax = max(max_j |x[i, j]|, 1e-5)        # the floor keeps all-zero rows finite
    scale  = absmax / 127
    q[i, j] = clamp(round_half_even(x[i, j] / scale), -127, 127)   as int8

all in float32 (x is upcast first). Non-finite inputs (NaN, +-Inf) are treated as 0: they do not
enter the scale and quantize to 0, so every input has a defined answer, including the edge values
the harness plants for exact comparisons. Both divisions are tensor-by-tensor divisions, which
PyTorch rounds correctly (IEEE 754) on the CPU and on CUDA (a division by a Python scalar becomes a
multiply by its reciprocal on CUDA, which can differ in the last bit). The task's output is q; the
scales are a pure function of x (absmax / 127) and are not returned, since a task has one output.

``get_inputs(shape, dtype, device, generator)`` draws x of shape (M, N): standard normal with a
per-row magnitude drawn log-uniformly over four decades (activations' rows differ in scale), in
``dtype``.
"""

import torch


class Model(torch.nn.Module):
    """q = clamp(round(x / scale), -127, 127).to(int8), scale = max(absmax of the row, 1e-5) / 127."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = torch.where(xf.abs() <= torch.finfo(torch.float32).max, xf, 0.0)  # NaN, +-Inf -> 0
        absmax = xf.abs().amax(dim=1, keepdim=True).clamp(min=1e-5)
        scale = absmax / torch.full_like(absmax, 127.0)
        return torch.round(xf / scale).clamp(-127, 127).to(torch.int8)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """x of shape (M, N): standard normal times 10^u per row, u uniform in [-2, 2], in ``dtype``."""
    M, N = shape["M"], shape["N"]
    x = torch.randn((M, N), dtype=torch.float32, device=device, generator=generator)
    mag = 10.0 ** (4.0 * torch.rand((M, 1), dtype=torch.float32, device=device, generator=generator) - 2.0)
    return [(x * mag).to(dtype)]
