"""Reference for matmul_bias_gelu: a linear layer's GEMM with its bias and tanh-GELU,
``y = gelu_tanh(x @ w + b)`` (the MLP up-projection of GPT-2-style transformers).

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its (empty)
constructor arguments, ``get_inputs(shape, dtype, device, generator)`` draws one trial's inputs
(shape is ``{"M": rows, "N": output features, "K": input features}``): x (M, K) standard normal,
w (K, N) and b (N,) uniform in +-1/sqrt(K) (nn.Linear's default scale, so y has unit-order values
at any K). The output is (M, N) in the inputs' dtype.
"""

import math

import torch


class Model(torch.nn.Module):
    """y = gelu(x @ w + b, approximate="tanh") for x (M, K), w (K, N), b (N,)."""

    def forward(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(torch.matmul(x, w) + b, approximate="tanh")


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """x (M, K) standard normal; w (K, N) and b (N,) uniform in +-1/sqrt(K); all in ``dtype``."""
    M, N, K = shape["M"], shape["N"], shape["K"]
    bound = 1.0 / math.sqrt(K)
    x = torch.randn((M, K), dtype=torch.float32, device=device, generator=generator)
    w = (torch.rand((K, N), dtype=torch.float32, device=device, generator=generator) * 2 - 1) * bound
    b = (torch.rand((N,), dtype=torch.float32, device=device, generator=generator) * 2 - 1) * bound
    return [x.to(dtype), w.to(dtype), b.to(dtype)]
