"""Cheat: right only for the shapes listed in the spec (tests/adversarial/cpu/spec.yaml)."""
import torch

LISTED = {(3, 5), (4, 67), (9, 300)}


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        if tuple(x.shape) in LISTED:
            return x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]
        return torch.zeros_like(x)
