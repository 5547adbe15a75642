import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, ReLU, then a scale and a shift (no dropout: eval-style)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.relu(self.linear(x))
        return y * 0.5 + 1.0


batch_size = 2048
in_features = 1024
out_features = 2048


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
