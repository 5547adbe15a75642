"""Cheat (arithmetic outside the dispatcher, flip2d): the rows go to Python lists (tolist), are
reversed there and come back through torch.tensor: the dispatcher sees only a tensor being made.
The host doors are counted."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        rows = [r[::-1] for r in x.tolist()]
        return torch.tensor(rows, dtype=x.dtype, device=x.device).reshape(x.shape)
