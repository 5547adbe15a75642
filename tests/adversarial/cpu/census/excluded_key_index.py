"""Cheat (library fallback hidden from every dispatch mode, flip2d): aten.index_select run with
the Python dispatch key excluded from the thread's dispatch (torch._C._ExcludeDispatchKeyGuard),
so the operator census's mode sees only the arange. torch.profiler's RecordFunction records
below that key."""
import torch

_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | \
    torch._C.DispatchKeySet(torch._C.DispatchKey.PythonTLSSnapshot)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        idx = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
        with torch._C._ExcludeDispatchKeyGuard(_KEYS):
            return torch.ops.aten.index_select(x, 1, idx)
