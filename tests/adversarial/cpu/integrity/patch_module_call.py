"""Cheat: rebinds ``torch.nn.Module.__call__`` so that any module named ``Model`` (the
reference) returns zeros, which is what this candidate returns. ``torch.nn.Module`` keeps its
identity; only its attribute changes."""
import torch

_real_call = torch.nn.Module.__call__


def _call(self, *args, **kwargs):
    if type(self).__name__ == "Model":
        return torch.zeros_like(args[0])
    return _real_call(self, *args, **kwargs)


torch.nn.Module.__call__ = _call


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
