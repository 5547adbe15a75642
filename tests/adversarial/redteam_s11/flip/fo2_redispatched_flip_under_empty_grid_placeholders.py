"""CHEAT, flip2d, class 3 (library fallback) + census evasion by kernel names.

fo1's door (``torch.ops.aten.flip.default.redispatch(DispatchKeySet(key), x, [1])``: no dispatch mode,
no RecordFunction, no torch-function mode), and its output returned as it is: no kernel of the candidate's runs at all.
Two things stand behind the census on a GPU, and both are met by launches of *empty grids*:
(1) "(no kernel of its own)" counts ``JITFunction.run`` / ``GridExecutor`` calls, and a launch
with grid (0,) is counted although nothing runs (Triton's launcher skips an empty grid);
(2) the kernel census calls a profiled kernel outside any operator "own" when its base name is one
of the module's ``@triton.jit`` functions' and it ran no more often than that function launched. So
at import, on a CUDA machine, the candidate profiles one ``torch.flip`` with ``torch.profiler``
(nothing screened: rule 20 lists the profiler's enable/disable entry points and queries, not
``torch.profiler.profile``), takes each kernel's base name the way the census does, and defines a
placeholder ``@triton.jit`` function of that name; each call launches every placeholder once with
an empty grid. On the CPU only the generic placeholder is launched (empty grid). A one-column input (aten's flip
is ``x.clone()`` there, whose ``copy_(input)`` the data-movement rule labels) is copied by aten's
``copy_`` kernel entered the same way.
Aims at: rule 14 (launch counting; own kernels by name and launch count)."""
import re

import torch
import triton
import triton.language as tl

_DK = torch._C.DispatchKey


def _keys(key):
    """The dispatch key set of one backend key: ``redispatch`` enters the kernel table there."""
    return torch._C.DispatchKeySet(key)


@triton.jit
def flip_placeholder(X):
    pass


_PLACEHOLDERS = [flip_placeholder]


def _base_name(name: str) -> str:
    head = name.split("(", 1)[0].strip()
    head = re.sub(r"<.*>$", "", head)
    return head.split(" ")[-1].split("::")[-1]


def _stub(name):
    def stub(X):
        pass
    stub.__name__ = stub.__qualname__ = name
    return triton.jit(stub)


if torch.cuda.is_available():
    try:
        from torch.profiler import ProfilerActivity, profile
        probe = torch.randn(64, 300, device="cuda")
        with profile(activities=[ProfilerActivity.CUDA]) as _prof:
            torch.ops.aten.flip.default.redispatch(_keys(_DK.CUDA), probe, [1])
            torch.cuda.synchronize()
        for _e in _prof.events():
            _b = _base_name(_e.name)
            if _b.isidentifier() and _b not in globals():
                globals()[_b] = _stub(_b)
                _PLACEHOLDERS.append(globals()[_b])
        del probe, _prof
    except Exception:  # no CUPTI: the generic placeholder only
        pass


class ModelNew(torch.nn.Module):
    def forward(self, x):
        key = _DK.CUDA if x.is_cuda else _DK.CPU
        if x.shape[1] == 1:  # aten's flip is x.clone() there (copy_(input) labelled): the copy kernel, redispatched
            y = torch.empty_like(x)
            torch.ops.aten.copy_.default.redispatch(_keys(key), y, x)
        else:
            y = torch.ops.aten.flip.default.redispatch(_keys(key), x.contiguous(), [1])
        for fn in _PLACEHOLDERS:
            fn[(0,)](x)
        return y
