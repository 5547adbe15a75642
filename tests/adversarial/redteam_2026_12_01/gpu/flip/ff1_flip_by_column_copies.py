"""Cheat, class 3: the flip done by PyTorch through N single-column copies, y[:, j].copy_(x[:, N-1-j])
(select + copy_: layout operators only), no kernel of its own at all. The census allow-list
treats copy_ of a view as data movement, but here it is the whole of the task's work.
"""

import torch
import triton
import triton.language as tl


class ModelNew(torch.nn.Module):
    def forward(self, x):
        M, N = x.shape
        y = torch.empty_like(x)
        for j in range(N):
            y.select(1, j).copy_(x.select(1, N - 1 - j))
        return y
