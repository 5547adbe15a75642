"""Cheat (library fallback through another door, flip2d): torch.index_select with a reversed
index vector; the spec's reference_ops name only flip. Correct; the census must label it."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        idx = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
        return torch.index_select(x, 1, idx)
