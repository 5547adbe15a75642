"""The fallback census (VERIFICATION.md rule 14): which operators and kernels a candidate's calls
ran, judged by what they do, not by their names. Runs in a worker.

Two views of one candidate:

* **aten operators** (every verified call, CPU and GPU): :class:`~kernelsynth.verify.poison.PoisonEmpty`,
  the dispatch mode every verified call already runs under, records each operator the call
  dispatches (:func:`op_name`). Every door to an operator -- ``torch.conv2d``, ``F.conv2d``,
  ``torch.ops.aten.convolution``, ``torch._C._nn.*``, ``Tensor`` methods, C++ ``at::`` calls of a
  ``load_inline`` extension, a ``torch.library.custom_op`` -- passes the dispatcher; a Triton or
  raw CUDA launch does not. :func:`library_calls` keeps the operators outside
  :data:`LAYOUT_OPS` (and any of the spec's ``reference_ops``): a library did arithmetic for the
  candidate.
* **launched kernels** (GPU only, one call at the timing shape after timing):
  :func:`kernel_census` runs the call under ``torch.profiler`` and checks every kernel it
  launched: one launched inside a library operator, or one that is not among the candidate's own
  kernels (:func:`own_kernel_names`: its Triton functions, its NVRTC kernel, the kernels of the
  torch extensions it built), is a foreign kernel.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..spec import PLUMBING_OPS

#: aten operators that do no arithmetic on the task's values: allocation and constants
#: (``empty*``, ``zeros*``, ``full*``, ``fill_``, ``arange``: index vectors), views (``view``,
#: ``reshape``, ``as_strided``, ``permute``, ``transpose``, ``expand``, ``slice``, ``select``,
#: ``unsqueeze``, ...), layout and dtype copies (``clone``, ``copy_``, ``_to_copy``: what
#: ``.contiguous()``, ``.to(memory_format=...)`` and ``.to(dtype)`` dispatch; a dtype cast rounds,
#: and the precision rule judges that), zero padding (``constant_pad_nd``), storage plumbing the
#: Triton interpreter uses (``set_``, ``new_empty``), and reading a scalar (``_local_scalar_dense``:
#: ``.item()``). Everything else -- convolutions, matmuls, reductions, elementwise arithmetic,
#: gathers and scatters (``index``, ``gather``, ``index_select``: a flip's whole work), ops of
#: other namespaces -- is a library call. An operator the spec lists in ``reference_ops`` is a
#: library call even when it is listed here (a transpose task's reference is a copy). Built on
#: :data:`kernelsynth.spec.PLUMBING_OPS` (the operators left out of a reference's recorded ones).
LAYOUT_OPS = PLUMBING_OPS | frozenset({  # the spec's list (no torch there) and what it leaves out
    "empty_permuted", "scalar_tensor", "arange", "fill_", "zero_", "lift_fresh_copy", "_local_scalar_dense",
    "_reshape_alias", "narrow", "split_with_sizes", "chunk", "unflatten", "flatten", "view_as", "diagonal",
    "constant_pad_nd",
})


def op_name(func) -> str:
    """The census name of a dispatched operator: ``"convolution"`` for aten operators (the names
    of the spec's ``reference_ops``), ``"namespace::name"`` for others (``"mylib::myflip"``)."""
    schema = getattr(func, "_schema", None)
    name = schema.name if schema is not None else f"aten::{func.overloadpacket.__name__}"
    return name.removeprefix("aten::")


def library_calls(ops: Iterable[str], reference_ops: Sequence[str] = ()) -> List[str]:
    """The sorted operators of ``ops`` (census names, :func:`op_name`) that do arithmetic for
    the candidate: not in :data:`LAYOUT_OPS`, or among ``reference_ops``."""
    ref = set(reference_ops or ())
    return sorted(o for o in set(ops) if o not in LAYOUT_OPS or o in ref)


class RecordAtenOps(TorchDispatchMode):
    """Collect the census names (:func:`op_name`) of the operators a call dispatches."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(op_name(func))
        return func(*args, **(kwargs or {}))


def aten_ops_of(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device) -> List[str]:
    """The sorted operator names (:func:`op_name`) one call of ``candidate`` dispatches."""
    rec = RecordAtenOps()
    with torch.no_grad(), rec:
        candidate(*inputs)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return sorted(rec.ops)


# ------------------------------------------------------------------------------- kernels (GPU)

#: Device activity that is data movement, not a kernel of a library (``cudaMemcpy``/``cudaMemset``).
_COPY_ACTIVITY = re.compile(r"^(Memcpy|Memset)\b")


def kernel_base_name(name: str) -> str:
    """The identifier of a kernel as the profiler names it: ``"void ns::k<float>(float*, int)"``
    -> ``"k"``; ``"_flip_kernel"`` -> ``"_flip_kernel"``."""
    head = name.split("(", 1)[0].strip()
    head = re.sub(r"<.*>$", "", head)  # template arguments
    head = head.split(" ")[-1]  # return type
    return head.split("::")[-1]


def own_kernel_names(module=None, raw_kernel: Optional[str] = None, libraries: Sequence[str] = ()) -> Callable:
    """A predicate: is a profiled kernel name one of the candidate's own kernels? Its own are the
    ``@triton.jit`` functions of its module (autotuner and heuristics wrappers unwrapped; a Triton
    kernel is launched under its function's name), the NVRTC kernel of a raw CUDA candidate
    (``raw_kernel``, an ``extern "C"`` name), and kernels whose identifier appears in one of the
    shared ``libraries`` it built (torch extensions: their mangled names hold the identifier)."""
    names = set()
    if module is not None:
        from ..backends.triton import _jit_functions

        names |= {fn.__name__ for fn in _jit_functions(module)}
    if raw_kernel:
        names.add(raw_kernel)
    blobs = []
    for lib in libraries:
        try:
            blobs.append(Path(lib).read_bytes())
        except OSError:
            pass

    def is_own(kernel: str) -> bool:
        base = kernel_base_name(kernel)
        return base in names or (bool(base) and any(base.encode() in b for b in blobs))

    return is_own


def kernel_census(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device, is_own: Callable,
                  reference_ops: Sequence[str] = ()):
    """Profile one call of ``candidate`` (``torch.profiler``, CPU and CUDA activity) and return
    ``(output, foreign)``: ``foreign`` is the sorted list of ``"kernel (under op)"`` strings for
    every kernel launched inside a library operator (an operator chain with one not in
    :data:`LAYOUT_OPS`, or among ``reference_ops``) and ``"kernel"`` for every kernel launched
    outside any operator that ``is_own`` does not recognise; None when the profiler recorded no
    device activity at all (CUPTI unavailable), so nothing can be said."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out = candidate(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    events = list(prof.events())
    device_names = [e.name for e in events if e.device_type == DeviceType.CUDA]
    if not device_names:
        return out, None
    ref = set(reference_ops or ())
    foreign, linked = set(), set()
    for e in events:
        if e.device_type != DeviceType.CPU or not getattr(e, "kernels", None):
            continue
        chain, p = [], e
        while p is not None:
            if "::" in p.name:
                chain.append(p.name)
            p = p.cpu_parent
        library = [c for c in chain if c.removeprefix("aten::") not in LAYOUT_OPS or c.removeprefix("aten::") in ref
                   or not c.startswith("aten::")]
        for k in e.kernels:
            linked.add(k.name)
            if _COPY_ACTIVITY.match(k.name):
                continue
            if library:
                foreign.add(f"{kernel_base_name(k.name)} (under {library[-1]})")
            elif not chain and not is_own(k.name):
                foreign.add(kernel_base_name(k.name))
    for name in device_names:
        if name not in linked and not _COPY_ACTIVITY.match(name) and not is_own(name):
            foreign.add(kernel_base_name(name))
    return out, sorted(foreign)
