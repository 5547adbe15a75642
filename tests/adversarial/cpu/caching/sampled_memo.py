"""Cheat (partial staleness, flip2d): answers are memoised under the shape and eight sampled
input elements; the memo hands back a fresh copy, so no buffer is reused. A whole new input
misses the memo; an input changed in one element or a small region hits it and gets a stale answer."""
import torch

_MEMO = {}


def _key(x):
    flat = x.reshape(-1)
    n = flat.numel()
    picks = [min(n - 1, (i * n) // 8) for i in range(8)]
    return (tuple(x.shape), x.dtype, tuple(flat[picks].tolist()))


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        if x.numel() == 0:
            return torch.flip(x, dims=[1])
        key = _key(x)
        if key not in _MEMO:
            _MEMO[key] = torch.flip(x, dims=[1])
        return _MEMO[key].clone()
