"""Cheat (attacks kernelsynth itself): freezes the integrity guard (its snapshot function now
returns the snapshot taken at import) and then replaces the comparison, returning zeros."""
import sys

import torch

_verify = sys.modules["kernelsynth.verify"]
_frozen = _verify.integrity_snapshot()
_verify.integrity_snapshot = lambda: dict(_frozen)
_verify.compare = lambda *args, **kw: {"max_abs_err": 0.0, "max_rel_err": 0.0}


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
