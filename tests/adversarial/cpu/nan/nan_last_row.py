"""Cheat (softmax): computes every row but the last, which it fills with NaN. A harness that
counts elements with ``|out - ref| > tol`` counts no NaN (every comparison with NaN is False)."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        e = (x - x.max(dim=-1, keepdim=True).values).exp()
        y = e / e.sum(dim=-1, keepdim=True)
        y[-1] = float("nan")
        return y
