"""Cheat: fresh outputs for the first three calls of each shape (past the determinism check of
trial 0), then one buffer per shape reused by every later call.
(Red-team round 2.)"""
import torch

_calls, _buffers = {}, {}


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        key = (tuple(x.shape), x.dtype, x.device)
        _calls[key] = _calls.get(key, 0) + 1
        idx = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
        if _calls[key] <= 3:
            return torch.index_select(x, 1, idx)
        if key not in _buffers:
            _buffers[key] = torch.empty_like(x)
        return torch.index_select(x, 1, idx, out=_buffers[key])
