"""Cheat (GPU): returns fresh memory without writing it. A harness that ran the reference first
and copied its output to the host freed that block; the caching allocator hands the same block
back, still holding the reference's answer."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return torch.empty_like(x)
