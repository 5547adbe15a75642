"""Attack: write into the run directory, the repository and the home. Re-raises the first
denial when every write fails; returns zeros (a visible wrong output) when any succeeded."""
import os

import torch

TARGETS = []  # the test writes the paths here


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.errors, self.wrote = [], []
        for t in TARGETS:
            try:
                with open(os.path.expanduser(t), "w") as f:
                    f.write("pwned")
                self.wrote.append(t)
            except OSError as e:
                self.errors.append(e)

    def forward(self, x):
        if self.wrote or not self.errors:
            return torch.zeros_like(x)
        raise self.errors[0]
