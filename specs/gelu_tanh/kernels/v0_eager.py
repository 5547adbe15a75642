"""gelu_tanh v0: the formula written out in eager PyTorch, in float32 (Hugging Face's NewGELU style).

Many model codebases spell the tanh approximation out as tensor operations and upcast to float32
for accuracy: a cast, x^3, a scale, an add, a scale, tanh, an add and two multiplies, then a cast
back -- about ten kernels, each reading and writing a full (M, N) float32 tensor. The arithmetic
is float32 throughout, rounded once to the input dtype at the end.
"""

import math

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        inner = math.sqrt(2.0 / math.pi) * (xf + 0.044715 * torch.pow(xf, 3.0))
        return (0.5 * xf * (1.0 + torch.tanh(inner))).to(x.dtype)
