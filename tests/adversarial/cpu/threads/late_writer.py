"""Cheat: returns the right answer, then a thread overwrites it 30 ms later (after a harness
that compares at once has looked)."""
import threading
import time

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        y = x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]

        def spoil():
            time.sleep(0.03)
            y.zero_()

        threading.Thread(target=spoil, daemon=True).start()
        return y
