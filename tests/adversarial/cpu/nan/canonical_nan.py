"""Cheat: flips, but rewrites every NaN as the standard NaN and flushes subnormals to zero
(what an arithmetic shortcut would do): a data-movement op must keep every bit."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        y = x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]
        y = torch.where(y.abs() < torch.finfo(y.dtype).tiny, y * 0.0, y)
        return torch.where(torch.isnan(y), torch.full_like(y, float("nan")), y)
