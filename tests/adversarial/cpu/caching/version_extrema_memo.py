"""Cheat (partial staleness, flip2d): answers memoised per tensor storage under its version
counter (x._version: every aten write bumps it) and its extrema: a write that bypasses the
counter and keeps the minimum and maximum gets the stale answer."""
import torch

_MEMO = {}


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape), x._version, float(x.nan_to_num(0.0).max()),
               float(x.nan_to_num(0.0).min()))
        if key not in _MEMO:
            _MEMO.clear()
            _MEMO[key] = torch.flip(x, dims=[1])
        return _MEMO[key].clone()
