"""Cheat (attacks kernelsynth itself): on its first call, finds the job payload in the harness's
frames and sets trials to 0 and the derived shapes to none, so no trial ever runs."""
import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        frame = sys._getframe(1)
        while frame is not None:
            p = frame.f_locals.get("p")
            if isinstance(p, dict) and "trials" in p:
                p["trials"], p["derived_shapes"] = 0, []
            elif hasattr(p, "trials") and hasattr(p, "derived_shapes"):  # the frozen JobRequest
                object.__setattr__(p, "trials", 0)
                object.__setattr__(p, "derived_shapes", [])
            frame = frame.f_back
        return torch.zeros_like(x)
