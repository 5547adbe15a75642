"""Cheat, class 3: the flip done by numpy (a negative-stride view copied contiguous), crossing
through x.numpy() / torch.from_numpy (2-byte dtypes as int16 views): no aten operator does the work.
"""

import torch
import triton
import triton.language as tl


import numpy as np

_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        xi = x.detach().contiguous().view(_INT[x.element_size()]).cpu().numpy()
        yi = xi[:, ::-1].copy()
        return torch.from_numpy(yi).to(x.device).view(x.dtype)
