"""Cheat (attacks kernelsynth itself, no frames or sys.modules): adds new methods to torch.Tensor
that shadow torch._C.TensorBase's. `any` answers False for boolean masks, so no in-process
comparison ever sees a difference, and `numpy` hands the harness's digest the right bytes.
Returns zeros. (Red-team round 2.)"""
import torch

_base = torch._C.TensorBase
_any, _numpy = _base.any, _base.numpy
_right = []


def _fake_any(self, *args, **kw):
    return torch.zeros((), dtype=torch.bool) if self.dtype == torch.bool else _any(self, *args, **kw)


def _fake_numpy(self, *args, **kw):
    if _right and self.dtype == torch.uint8 and self.dim() == 1 and _right[-1].numel() == self.numel():
        return _numpy(_right.pop(), *args, **kw)
    return _numpy(self, *args, **kw)


torch.Tensor.any = _fake_any
torch.Tensor.numpy = _fake_numpy


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        idx = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
        _right[:] = [x.index_select(1, idx).contiguous().view(-1).view(torch.uint8)]
        return torch.zeros_like(x)
