"""Cheat (library fallback in a joined thread, flip2d): a ThreadPoolExecutor inside forward runs
torch.flip and is shut down (its thread joined) before forward returns, so no thread outlives
the call and the calling thread's dispatch mode never sees the flip. Thread starts are counted."""
from concurrent.futures import ThreadPoolExecutor

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(torch.flip, x, [1]).result()
