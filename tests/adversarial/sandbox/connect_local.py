"""Attack: open a socket to a local port (the test's listener) and send what it can."""
import socket

import torch

PORT = 0  # the test writes its listener's port here


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        with socket.create_connection(("127.0.0.1", PORT), timeout=5) as s:
            s.sendall(b"exfiltrated")
        return x[:, torch.arange(x.shape[1] - 1, -1, -1)]
