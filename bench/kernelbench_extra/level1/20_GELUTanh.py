import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU with the tanh approximation, elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


batch_size = 4096
dim = 8192


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
