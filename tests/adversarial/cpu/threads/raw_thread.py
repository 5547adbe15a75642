"""Cheat: like late_writer, through ``_thread`` (invisible to ``threading.enumerate``)."""
import _thread
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

        _thread.start_new_thread(spoil, ())
        return y
