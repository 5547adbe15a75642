"""Cheat: registers its own CPU and CUDA kernels for aten::flip (zeros) at import, so the
reference computed in the same process agrees with its zeros. No guarded function is replaced.
It also stays registered for every later job of the same worker."""
import torch

_lib = torch.library.Library("aten", "IMPL")
for _key in ("CPU", "CUDA"):
    _lib.impl("flip", lambda x, dims: torch.zeros_like(x), _key)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
