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

import contextlib
import functools
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .dynamo_deferral import defer
from ..spec import PLUMBING_OPS
from .comparison import _S

#: aten operators that do no arithmetic on the task's values: allocation and constants
#: (``empty*``, ``zeros*``, ``full*``, ``fill_``, ``arange``: index vectors), views (``view``,
#: ``reshape``, ``as_strided``, ``permute``, ``transpose``, ``expand``, ``slice``, ``select``,
#: ``unsqueeze``, ...), layout and dtype copies (``clone``, ``copy_``, ``_to_copy``: what
#: ``.contiguous()``, ``.to(memory_format=...)`` and ``.to(dtype)`` dispatch; a dtype cast rounds,
#: and the precision rule judges that), zero padding (``constant_pad_nd``), storage plumbing the
#: Triton interpreter uses (``set_``, but onto a storage object only inside a launch: :data:`STORAGE_SET`;
#: ``new_empty``), and reading a scalar (``_local_scalar_dense``:
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
    if name == "aten::set_" and getattr(schema, "overload_name", "").startswith("source_Storage") \
            and not _STATE["in_launch"]:  # the interpreter's own argument copies dispatch it
        return STORAGE_SET  # a tensor moved onto a storage object, maybe one made from a raw address
    return name.removeprefix("aten::")


#: The census name of ``set_`` onto a storage object (``set_.source_Storage*``): not layout, since
#: the storage may be one made from a raw data pointer (``torch._C._construct_storage_from_data_pointer``:
#: memory torch does not own, tests/adversarial/redteam_s9 fa1), so it is labelled a library call;
#: ``set_`` from another tensor, and inside a Triton interpreter launch (its argument copies), stays
#: layout.
STORAGE_SET = "set_(storage)"


def library_calls(ops: Iterable[str], reference_ops: Sequence[str] = ()) -> List[str]:
    """The sorted operators of ``ops`` (census names, :func:`op_name`) that do arithmetic for
    the candidate: not in :data:`LAYOUT_OPS`, or among ``reference_ops``."""
    ref = set(reference_ops or ())
    return sorted(o for o in set(ops) if o not in LAYOUT_OPS or o in ref)


@defer  # its raw __torch_dispatch__ until torch._dynamo is imported (dynamo_deferral)
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
    shared ``libraries`` it built (torch extensions: their mangled names hold the identifier).
    The predicate's ``triton_names`` attribute lists the Triton ones, which :func:`kernel_census`
    also matches by launch count."""
    names, triton_names = set(), set()
    if module is not None:
        from ..backends.triton import _jit_functions

        triton_names = {fn.__name__ for fn in _jit_functions(module)}
        names |= triton_names
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

    is_own.triton_names = frozenset(triton_names)  # matched by launch counts too (kernel_census)
    return is_own


def kernel_census(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device, is_own: Callable,
                  reference_ops: Sequence[str] = (), ops: Optional[set] = None):
    """Profile one call of ``candidate`` (``torch.profiler``, CPU and CUDA activity) and return
    ``(output, foreign)``: ``foreign`` is the sorted list of ``"kernel (under op)"`` strings for
    every kernel launched inside a library operator (an operator chain with one not in
    :data:`LAYOUT_OPS`, or among ``reference_ops``) and ``"kernel"`` for every kernel launched
    outside any operator that ``is_own`` does not recognise; None when the profiler recorded no
    device activity at all (CUPTI unavailable), so nothing can be said.

    Own Triton kernels are matched by identity, not by name alone: a kernel named after one of
    the candidate's ``@triton.jit`` functions (``is_own.triton_names``) counts as its own only as
    many times as its Triton code launched a kernel of that name during the call
    (``JITFunction.run``, counted by :func:`install_watch`); launches beyond that (a library's
    kernel under a name the candidate gave a placeholder function) are foreign. ``ops``: a set
    that receives the census names of the CPU operators the profiler recorded (at any depth:
    :func:`profiled_library_calls` judges them). A Python thread started during the call fails
    it (VerificationFailure, rule 11)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    from .failures import VerificationFailure

    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        launched_before, starts_before = triton_launches(), thread_starts()  # the call's, not the profiler's
        out = candidate(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        started = thread_starts() - starts_before
    if started:
        raise VerificationFailure("a thread was started during the profiled call (kernel census): threads are not "
                                  "allowed (VERIFICATION.md rule 11)")
    launched = {kernel_base_name(k): n - launched_before.get(k, 0) for k, n in triton_launches().items()}
    events = list(prof.events())
    if ops is not None:
        ops.update(e.name.removeprefix("aten::") for e in events
                   if e.device_type == DeviceType.CPU and "::" in e.name)
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
    foreign |= set(unlaunched_kernels(device_names, getattr(is_own, "triton_names", frozenset()), launched))
    return out, sorted(foreign)


def unlaunched_kernels(device_names: Sequence[str], triton_names: Iterable[str], launched: Dict[str, int]) -> List[str]:
    """The identity check of :func:`kernel_census`: for every name of ``triton_names`` (the
    candidate's ``@triton.jit`` functions), the profiled kernels of that name (``device_names``,
    one entry per kernel run) beyond the launches its Triton code made (``launched``: ``{name:
    count}``), as ``"name (ran Nx, launched Kx by the candidate's Triton code)"`` strings, sorted.
    A library kernel given the name of a placeholder function shows up here."""
    names = set(triton_names)
    seen: Dict[str, int] = {}
    for name in device_names:
        base = kernel_base_name(name)
        if base in names:
            seen[base] = seen.get(base, 0) + 1
    return sorted(f"{b} (ran {n}x, launched {launched.get(b, 0)}x by the candidate's Triton code)"
                  for b, n in seen.items() if n > launched.get(b, 0))


# ------------------------------------------------------------- doors the dispatch mode misses

class Census(set):
    """The census names (:func:`op_name`) of the operators a job's verified calls dispatched (a
    set), and what :func:`watching` saw around those calls besides: ``host:<door>`` entries for
    the task's data taken to the host (``Tensor.numpy``, ``__array__``, ``__dlpack__``,
    ``tolist``, ``torch.from_numpy``, ``from_dlpack``, ``frombuffer``: numpy arithmetic never
    reaches the dispatcher), ``<op>(input)`` entries for a copy of an input when ``movement``
    (a data-movement task: copying an input there is the task's whole work, VERIFICATION.md
    rule 14), and the counts ``calls`` / ``calls_without_launch`` (verified calls that launched
    no Triton kernel: :func:`install_watch` counts the launches)."""

    def __init__(self, movement: bool = False):
        super().__init__()
        _forget_profiled(self)  # a census at a freed one's address starts empty
        self.movement = movement
        self.calls = 0
        self.calls_without_launch = 0
        self.input_storages: frozenset = frozenset()


#: The Census of the verified call now running (None: none); ``launches``: Triton launches so far
#: (``{kernel name: count}``); ``in_launch``: depth of interpreter launches (their own storage
#: copies are not the candidate's); ``threads``: Python thread starts so far.
_STATE = {"census": None, "launches": {}, "in_launch": 0, "threads": 0, "numpy_watch": False, "profiling": False,
          "last_grid": None,
          "scalars": 0, "quiet": 0, "marks": {}, "held_marks": []}
#: Operators that copy a tensor (their source is an input's storage: a data-movement task's work).
COPY_OPS = frozenset({"copy_", "clone", "_to_copy", "index_copy", "as_strided_copy", "flip", "roll"})
_HOST_DOORS = ("numpy", "__array__", "__dlpack__", "tolist")
#: The unwrapped ``Tensor.untyped_storage``: the census's own storage checks (input storages,
#: copies of an input) are not a candidate's host door.
_storage = torch.Tensor.untyped_storage
_INSTALLED = []


def _note_host(door: str) -> None:
    census = _STATE["census"]
    if census is not None and not _STATE["in_launch"] and not _STATE["quiet"]:
        census.add(f"host:{door}")


def _empty_grid(grid, kwargs) -> bool:
    """Whether a Triton launch's ``grid`` (a tuple or an int; for a callable grid, the value it
    returned for that launch; None: not known) has a zero (or negative) extent: no program runs."""
    if grid is None:
        return False
    g = grid if isinstance(grid, (tuple, list)) else (grid,)
    try:
        return any(int(x) <= 0 for x in g)
    except (TypeError, ValueError):  # not an extent: counted, as before
        return False


def _wrap(owner, attr: str, make) -> None:
    original = getattr(owner, attr, None)
    if original is not None and not getattr(original, "_kernelsynth_watch", False):
        wrapped = make(original)
        wrapped._kernelsynth_watch = True
        wrapped.__name__ = getattr(original, "__name__", attr)
        setattr(owner, attr, wrapped)


#: What a Triton launch may be given without a label (VERIFICATION.md rule 14): Triton reads its
#: arguments -- hashes, compares, converts and calls methods of them -- while it binds them, inside
#: the launch's exemption, so an object of any other type could run the candidate's Python there
#: unseen (redteam_s16 c3b: numpy inside a pointer object's ``untyped_storage()``; redteam_s16b d4-d9:
#: an ``int`` subclass's comparisons, a tuple subclass's ``__new__``, a ``TensorDescriptor``
#: subclass's ``base`` property, a ``dtype`` of a ``triton.reinterpret`` wrapper). An allow-list by
#: exact type: builtin scalars, ``torch.dtype``, plain tensors (``torch.Tensor``/``nn.Parameter``
#: with no shadowed method), ``tuple``/``list``/``torch.Size`` of those, Triton's ``constexpr``,
#: ``dtype`` and, over a plain tensor, ``TensorDescriptor``/``TensorWrapper``.
_POINTER_TYPES = (torch.Tensor, torch.nn.Parameter)
_SCALAR_TYPES = frozenset({int, float, bool, str, bytes, type(None), torch.dtype})
_SEQUENCE_TYPES = frozenset({tuple, list, torch.Size})
#: The launch keywords Triton itself takes (the grid callable is the candidate's and runs counted).
_LAUNCH_KEYWORDS = frozenset({"grid", "warmup"})
#: Items a launch's arguments are walked for (a 4100-item tuple hid an object: redteam_s16b d8).
_ARGUMENT_BUDGET = 65536


def _numpy_scalar_types() -> frozenset:
    np = sys.modules.get("numpy")
    if np is None:
        return frozenset()
    return frozenset(getattr(np, n) for n in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                              "uint64", "float16", "float32", "float64") if hasattr(np, n))


def _triton_types():
    """``(wrappers, dtypes, constexpr)``: Triton's own classes that carry a tensor to a launch
    (``TensorDescriptor``, ``TensorWrapper``), its dtype classes, its ``constexpr`` (those this
    Triton has)."""
    wrappers, dtypes, const = [], [], None
    for mod, name in (("triton.tools.tensor_descriptor", "TensorDescriptor"), ("triton.runtime.jit", "TensorWrapper")):
        cls = getattr(sys.modules.get(mod), name, None)
        if isinstance(cls, type):
            wrappers.append(cls)
    core = sys.modules.get("triton.language.core")
    if core is not None:
        dtypes = [c for c in (getattr(core, n, None) for n in ("dtype", "pointer_type", "block_type")) if isinstance(c, type)]
        const = getattr(core, "constexpr", None)
    return tuple(wrappers), tuple(dtypes), const


def _fields(x) -> dict:
    try:  # instance attributes, not properties: the type is checked to be exactly Triton's first
        return dict(vars(x))
    except TypeError:  # __slots__
        return {n: getattr(x, n) for n in getattr(type(x), "__slots__", ()) if hasattr(x, n)}


def odd_launch_argument(args, kwargs) -> Optional[str]:
    """The name of the first object among a Triton launch's arguments that is not on the allow-list
    above (``"<type>"``, ``"<type>(shadowed)"`` for a tensor with shadowed methods, ``"unchecked"``
    past :data:`_ARGUMENT_BUDGET` items); None when every one is."""
    from .comparison import shadowed_attributes

    wrappers, dtypes, const = _triton_types()
    scalars = _SCALAR_TYPES | _numpy_scalar_types()
    stack = list(args) + [v for k, v in kwargs.items() if k not in _LAUNCH_KEYWORDS]
    seen = 0
    while stack:
        seen += 1
        if seen > _ARGUMENT_BUDGET:
            return "unchecked"
        x = stack.pop()
        t = type(x)
        if t in scalars or t in dtypes:
            continue
        if t in _SEQUENCE_TYPES:
            stack.extend(x)
            continue
        if t in _POINTER_TYPES:
            if shadowed_attributes(x):
                return f"{t.__name__}(shadowed)"
            continue
        if const is not None and t is const:
            stack.append(getattr(x, "value", None))
            continue
        if t in wrappers:
            f = _fields(x)
            base = f.pop("base", None)
            f.pop("data", None)  # TensorWrapper: base.data; device: a torch.device
            if type(f.get("device")) is torch.device:
                f.pop("device")
            if type(base) in _POINTER_TYPES and not shadowed_attributes(base):
                stack.extend(f.values())
                continue
        return t.__name__
    return None


def _launch_arguments(args, kwargs, fn=None, grid=None) -> None:
    """Label a Triton launch ``host:launch_argument:<type>`` when :func:`odd_launch_argument` names an
    object, and ``host:launch_hook`` when Triton's launch or compile hooks (``knobs.runtime``) are set:
    they run inside the launch's exemption. Nothing is recorded outside a census or inside a launch."""
    census = _STATE["census"]
    if census is None or _STATE["in_launch"] or _STATE["quiet"]:
        return
    odd = odd_launch_argument(args, kwargs)
    if not odd and grid is not None and not callable(grid):  # Triton takes len() of it inside the launch
        odd = odd_launch_argument([grid], {})               # (red team s30b g1: a __len__ ran the flip)
    fn = getattr(fn, "fn", fn)  # a JITFunction's Python function
    if not odd and fn is not None:  # a parameter's default is bound inside the launch (red team s30b d1)
        odd = odd_launch_argument(list(getattr(fn, "__defaults__", None) or ()),
                                  dict(getattr(fn, "__kwdefaults__", None) or {}))
    if odd:
        census.add(f"host:launch_argument:{odd}")
    if _launch_hooks_set():
        census.add("host:launch_hook")


def _launch_hooks_set() -> bool:
    knobs = sys.modules.get("triton.knobs")
    runtime = getattr(knobs, "runtime", None)
    for name in ("launch_enter_hook", "launch_exit_hook", "jit_cache_hook", "jit_post_compile_hook",
                 "kernel_load_start_hook", "kernel_load_end_hook"):
        hook = getattr(runtime, name, None)
        if hook is None:
            continue
        calls = getattr(hook, "calls", hook)  # a HookChain, or an older Triton's plain callable
        if calls:
            return True
    return False


def _triton_own(fn) -> bool:
    """Whether ``fn``, an autotuner's ``do_bench`` or hook, is Triton's own, by identity: the driver's
    benchmarker, ``triton.testing``'s ``do_bench``/``do_bench_cudagraph``, or a function made from
    one of the code objects ``triton.runtime.autotuner.Autotuner.__init__`` defines (its default
    ``reset_to_zero``/``restore_value`` hooks, the lambdas of its deprecated arguments) with that
    module's globals. Anything else is the candidate's (redteam_s16b: a ``do_bench`` whose code
    claimed Triton's file name, d2; one equal to Triton's by ``__eq__``, d3; the module of an
    ``Autotuner`` subclass defined in the candidate's file, d7)."""
    import types

    import triton.testing
    from triton.runtime import autotuner

    own = [triton.testing.do_bench, getattr(triton.testing, "do_bench_cudagraph", None)]
    try:
        from triton.runtime import driver
        own.append(driver.active.get_benchmarker())
    except Exception:  # noqa: BLE001 - no active driver: only triton.testing's
        pass
    if any(fn is o for o in own):
        return True
    if type(fn) is not types.FunctionType or fn.__globals__ is not vars(autotuner):
        return False
    return any(fn.__code__ is c for c in _autotuner_codes())


@functools.lru_cache(maxsize=1)
def _autotuner_codes() -> tuple:
    """The code objects nested in ``triton.runtime.autotuner.Autotuner.__init__`` (read once)."""
    import types

    from triton.runtime import autotuner

    nested, stack = [], [autotuner.Autotuner.__init__.__code__]
    while stack:
        for c in stack.pop().co_consts:
            if type(c) is types.CodeType:
                nested.append(c)
                stack.append(c)
    return tuple(nested)


def _bench_watch(original, exempt, outside):
    """``Autotuner._bench``, watched: only Triton's own benchmarking (its ``do_bench``: the L2
    flush, events, ``tolist``; the ``reset_to_zero``/``restore_value`` hooks it installs) runs inside
    the launch exemption. The candidate's callables that ``_bench`` calls -- a ``do_bench`` given to
    ``@triton.autotune``, its ``pre_hook``/``post_hook``, a ``Config``'s hooks -- are the candidate's
    code and are counted like a grid callable (redteam_s16 c3: the whole convolution in numpy inside
    a ``do_bench``, under the blanket exemption ``_bench`` had before). The swapped attributes are
    put back after the call."""
    def call(self, *a, **k):
        undo = []

        def swap(obj, name, wrap):
            fn = getattr(obj, name, None)
            if fn is None or not callable(fn):
                return
            d = vars(obj)
            undo.append((obj, name, name in d, d.get(name)))
            wrapped = wrap(fn)
            setattr(obj, name, wrapped)
            if getattr(obj, name, None) is not wrapped:  # a property that ignores the assignment
                census = _STATE["census"]
                if census is not None and not _STATE["quiet"]:
                    census.add(f"host:autotuner_{name}")

        try:
            for hook in ("pre_hook", "post_hook"):  # Triton's defaults (reset_to_zero, restore_value) stay exempt
                fn = getattr(self, hook, None)
                if fn is not None and not _triton_own(fn):
                    swap(self, hook, lambda f: outside(f, grid=False))
            config = k.get("config")
            for hook in ("pre_hook", "post_hook"):
                if config is not None and getattr(config, hook, None) is not None:
                    swap(config, hook, lambda f: outside(f, grid=False))
            try:
                bench = self.do_bench  # a cached_property: no active driver raises (so does _bench then)
            except Exception:  # noqa: BLE001 - left to the original call
                bench = None
            if bench is not None and _triton_own(bench):
                swap(self, "do_bench", lambda f: (lambda *ba, **bk: exempt(f, *ba, **bk)))
            return original(self, *a, **k)
        finally:
            for obj, name, had, old in reversed(undo):
                if had:
                    setattr(obj, name, old)
                else:
                    try:
                        delattr(obj, name)
                    except AttributeError:
                        pass
    return call


def _heuristics_watch(original, outside):
    """``Heuristics.run``, watched: its functions (``@triton.heuristics``) are the candidate's code.
    Outside a launch they run counted as it is; inside one -- under Triton's own ``do_bench``, which
    calls the autotuned function, a ``Heuristics`` -- they are swapped for counted wrappers for the
    call (redteam_s16b's note: they ran inside the exemption there)."""
    def call(self, *a, **k):
        values = getattr(self, "values", None)
        if not _STATE["in_launch"] or type(values) is not dict:
            return original(self, *a, **k)
        self.values = {name: outside(fn, grid=False) for name, fn in values.items()}
        try:
            return original(self, *a, **k)
        finally:
            self.values = values
    return call


def install_watch() -> None:
    """Install, once per process (a worker, before the candidate is imported), the counters the
    census reads around a verified call (:func:`watching`):

    * Python thread starts (``_thread.start_new_thread``, ``threading._start_new_thread`` and the
      ``start_joinable_thread`` of newer Pythons): a dispatch mode is thread-local, and a thread
      started and joined inside ``forward`` hides its operators from it (rule 11 refuses it);
    * the host doors of :class:`Census` (``torch.Tensor`` methods and ``torch`` functions);
    * Triton launches: ``JITFunction.run`` (a GPU launch, counted under the function's name, for
      the identity check of :func:`kernel_census`) and the interpreter's ``GridExecutor``;
      inside them and inside ``Autotuner._bench`` (the benchmarking of the configs), host doors
      and copies are Triton's own (autotuning's timer, the interpreter's argument copies) and are
      not recorded -- except inside a callable grid, which is the candidate's code and runs with
      the exemption lifted (tests/adversarial/redteam_s8 conv cf1: the whole convolution in numpy
      inside the grid callable of a trivial launch).

    Each wrapper only counts and calls the original. The ``_thread``/``threading`` modules and
    ``JITFunction`` are guarded namespaces (:data:`kernelsynth.verify.guard.GUARDED`)."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    import _thread
    import threading

    def thread_start(original):
        def start(*a, **k):
            _STATE["threads"] += 1
            return original(*a, **k)
        return start

    for owner, attr in ((_thread, "start_new_thread"), (_thread, "start_joinable_thread"),
                        (threading, "_start_new_thread"), (threading, "_start_joinable_thread")):
        _wrap(owner, attr, thread_start)

    def host(door):
        def make(original):
            def method(*a, **k):
                _note_host(door)
                return original(*a, **k)
            return method
        return make

    for door in _HOST_DOORS:
        _wrap(torch.Tensor, door, host(door))
    for door in ("from_numpy", "from_dlpack", "frombuffer"):
        _wrap(torch, door, host(door))
    # more doors to host memory (tests/adversarial/redteam_s7 f1, ff1): a CPU tensor's storage read
    # as bytes (numpy.frombuffer(bytes(x.untyped_storage()))), DLPack capsules through torch.utils
    # and torch._C, and host arrays or buffers turned back into tensors by as_tensor/asarray/tensor

    def cpu_storage(door):
        def make(original):
            def method(self, *a, **k):
                if getattr(getattr(self, "device", None), "type", None) == "cpu":
                    _note_host(door)
                return original(self, *a, **k)
            return method
        return make

    def from_host(door):
        def make(original):
            def fn(data=None, *a, **k):
                if not isinstance(data, torch.Tensor) and (
                        hasattr(data, "__array_interface__") or hasattr(data, "__dlpack__")
                        or isinstance(data, (bytes, bytearray, memoryview))):
                    _note_host(door)
                return original(data, *a, **k)
            return fn
        return make

    for door in ("untyped_storage", "storage", "_typed_storage"):
        _wrap(torch.Tensor, door, cpu_storage(door))
    for door in ("as_tensor", "asarray", "tensor"):
        _wrap(torch, door, from_host(door))
    import torch.utils.dlpack as dlpack
    for owner, door in ((dlpack, "to_dlpack"), (dlpack, "from_dlpack"), (torch._C, "_to_dlpack"),
                        (torch._C, "_from_dlpack"), (torch._C, "_to_dlpack_versioned")):
        _wrap(owner, door, host(door))

    _label_profiler_doors()

    def redispatched(original):  # below the Python key, without RecordFunction (redteam_s11 co1, mo1, xo1, fo1)
        def call(self, *a, **k):
            census = _STATE["census"]
            if census is not None and not _STATE["in_launch"]:
                try:
                    name = self.schema().name.split("::")[-1]
                except Exception:  # noqa: BLE001 - the label matters, not the name
                    name = "?"
                census.add(f"redispatch:{name}")
            return original(self, *a, **k)
        return call

    # OpOverload.redispatch and every other Python route to an operator's kernel table at a given
    # key set end in this method of the operator handle (torch/_ops.py)
    _wrap(torch._C._DispatchOperatorHandle, "redispatch_boxed", redispatched)
    _hide_profiler_state()
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return

    def exempt(fn, *a, **k):  # host doors and copies in here are Triton's, not the candidate's
        _STATE["in_launch"] += 1
        hook = _pause_numpy_watch()  # the interpreter's own numpy: not counted, and not slowed down
        mark = _mark(LAUNCH_MARK)  # the per-call profiler leaves the operators inside it out (candidate_ops)
        try:
            return fn(*a, **k)
        finally:
            _unmark(mark)
            _resume_numpy_watch(hook)
            _STATE["in_launch"] -= 1

    def inside_launch(original, self, a, k):
        _launch_arguments(a, k, fn=getattr(self, "fn", None), grid=k.get("grid", getattr(self, "grid", None)))
        hooks = getattr(self, "pre_run_hooks", None)
        if not hooks or _STATE["in_launch"]:
            return exempt(original, self, *a, **k)
        # JITFunction.add_pre_run_hook's hooks run inside the launch: the candidate's code, counted
        # (redteam_s16b d1: the whole convolution in numpy in one)
        self.pre_run_hooks = [outside(h, grid=False) for h in hooks]
        try:
            return exempt(original, self, *a, **k)
        finally:
            self.pre_run_hooks = hooks

    def counted(name):
        _STATE["launches"][name] = _STATE["launches"].get(name, 0) + 1

    def outside(fn, grid=True):  # the candidate's own code called from inside a launch (a grid callable, a hook): counted
        def call(*a, **k):
            depth, _STATE["in_launch"] = _STATE["in_launch"], 0
            hook = _resume_numpy_watch(_STATE["numpy_watch"])
            mark = _mark(CANDIDATE_MARK)  # counted again by the per-call profiler
            try:
                got = fn(*a, **k)
                if grid:
                    _STATE["last_grid"] = got  # what the launch used (_empty_grid)
                    _launch_arguments([got], {})  # Triton takes len() of it inside the launch (s30b g3)
                return got
            finally:
                _unmark(mark)
                _STATE["in_launch"] = depth  # first: the hook ignores its own removal inside a launch
                if hook:
                    _pause_numpy_watch()
        call._kernelsynth_outside = True
        return call

    def run(original):
        def launch(self, *a, **k):
            grid = k.get("grid")
            if callable(grid) and not getattr(grid, "_kernelsynth_outside", False):
                k["grid"] = outside(grid)  # redteam_s8 conv cf1: numpy inside the grid callable
            _STATE["last_grid"] = None
            kernel = inside_launch(original, self, a, k)
            if callable(grid):  # the extent the callable gave this launch, not a second call of it
                grid = _STATE["last_grid"]
            # the function's name: the kernel Triton compiles is named after it; a launch over an
            # empty grid runs nothing and is not the candidate's work (redteam_s11 fo2: placeholder
            # launches with grid (0,) beside a library flip)
            if not k.get("warmup") and not _empty_grid(grid, k):
                counted(getattr(self, "__name__", None) or getattr(kernel, "name", "?"))
            return kernel
        return launch

    _wrap(JITFunction, "run", run)
    try:
        from triton.runtime.autotuner import Autotuner, Heuristics
    except ImportError:
        pass
    else:
        _wrap(Autotuner, "_bench", lambda original: _bench_watch(original, exempt, outside))
        _wrap(Heuristics, "run", lambda original: _heuristics_watch(original, outside))
    try:
        from triton.runtime.interpreter import GridExecutor
    except ImportError:
        return

    def grid_call(original):
        def call(self, *a, **k):
            if callable(self.grid) and not getattr(self.grid, "_kernelsynth_outside", False):
                self.grid = outside(self.grid)
            try:
                return inside_launch(original, self, a, k)
            finally:
                counted(getattr(self.fn, "__name__", "?"))
        return call

    _wrap(GridExecutor, "__call__", grid_call)


#: Modules whose functions compute on host arrays: a call into one during a verified call is the
#: label ``host:numpy`` (:func:`_numpy_profile`).
HOST_ARRAY_MODULES = ("numpy",)
_SET_HOOKS = (sys.setprofile, sys.settrace)


#: ``"numpy."``: what a submodule's name of :data:`HOST_ARRAY_MODULES` starts with (one C-level
#: ``str.startswith`` per profile event: the hook runs on every C call of a verified call).
_HOST_PREFIXES = tuple(m + "." for m in HOST_ARRAY_MODULES)


def _host_array_module(name) -> bool:
    """Whether the module name ``name`` is one of :data:`HOST_ARRAY_MODULES` or inside one."""
    return isinstance(name, str) and (name in HOST_ARRAY_MODULES or name.startswith(_HOST_PREFIXES))


def _numpy_profile(frame, event, arg) -> None:
    """The ``sys.setprofile`` hook of a verified call (:func:`watching`; VERIFICATION.md rule 14):
    a call into numpy -- a C function or method of a numpy module, type or array (``c_call``:
    ``asarray``, ``frombuffer``, ``ndarray.astype``, ``ufunc.reduce``, whatever name or attribute
    path reached it) or a Python function defined in numpy (``call``: ``numpy.mean``) -- outside a
    Triton launch (the interpreter's own numpy) labels the call ``host:numpy``; a call of
    ``sys.setprofile``/``sys.settrace`` labels it ``host:setprofile`` (the hook may be gone). By what
    ran, not by names in the source (tests/adversarial/redteam_s9 ln1: an array-interface name
    joined at run time). Not seen: ufuncs called directly and arithmetic operators on arrays (no
    profile event), which need an array that some seen call made."""
    if event[-6:] == "return" or _STATE["in_launch"] or not _STATE["numpy_watch"]:  # half the events: returns
        return
    if event == "c_call":
        if arg in _SET_HOOKS:
            _note_host("setprofile")
            return
        mod = getattr(arg, "__module__", None)
        if mod is None:
            owner = getattr(arg, "__self__", None)
            mod = getattr(type(owner), "__module__", None) if owner is not None else None
        if _host_array_module(mod):
            _note_host("numpy")
    elif event == "call" and _host_array_module(frame.f_globals.get("__name__")):
        _note_host("numpy")


def _pause_numpy_watch():
    """Take the numpy hook off for a Triton launch; returns whether it was on (for
    :func:`_resume_numpy_watch`)."""
    if _STATE["numpy_watch"] and sys.getprofile() is _numpy_profile:
        sys.setprofile(None)
        return True
    return False


def _resume_numpy_watch(was_on) -> bool:
    """Put the numpy hook back after :func:`_pause_numpy_watch` (``was_on``); returns whether it
    was off and is now on."""
    if was_on and _STATE["numpy_watch"] and sys.getprofile() is None:
        sys.setprofile(_numpy_profile)
        return True
    return False


def thread_starts() -> int:
    """Python threads started in this process since :func:`install_watch` (0 before it)."""
    return _STATE["threads"]


def triton_launches() -> Dict[str, int]:
    """A copy of ``{kernel name: launches}`` counted since :func:`install_watch`."""
    return dict(_STATE["launches"])


# ------------------------------------------------------- views that do not depend on a dispatch mode

#: ``torch._C.TensorBase`` methods (C; the type is immutable, so they cannot be wrapped like the
#: ``torch.Tensor`` ones above) and ``torch.Tensor`` methods that hand the task's data to Python:
#: :class:`HostDoorMode` sees them whatever the door (``torch._C.TensorBase.tolist(x)``,
#: ``map(TensorBase.numpy, ...)``: the C methods ask the torch-function modes themselves).
#: ``apply_``/``map_``/``map2_`` run a Python callable per element.
TENSOR_HOST_METHODS = frozenset({"numpy", "tolist", "__array__", "__dlpack__", "apply_", "map_", "map2_"})
#: Storage doors of :class:`HostDoorMode`: host doors on CPU tensors (``bytes(x.untyped_storage())``).
TENSOR_STORAGE_METHODS = frozenset({"untyped_storage", "storage", "_typed_storage"})
#: Scalar reads (``_local_scalar_dense``, a layout operator, one element each): a verified call
#: that reads more than :data:`SCALAR_READS_MAX` of them took the task's data to Python element by
#: element (``host:item``).
SCALAR_METHODS = frozenset({"item", "__float__", "__int__", "__index__", "__bool__", "__complex__"})
SCALAR_READS_MAX = 32
#: Marks the per-call profiler reads (RecordFunction ranges): operators inside a launch mark are
#: Triton's (the interpreter's argument copies), except inside a candidate mark in it (a grid callable).
LAUNCH_MARK, CANDIDATE_MARK, CALL_MARK = "kernelsynth::launch", "kernelsynth::candidate", "kernelsynth::call"
#: The mark the harness records last, right before it stops the session: a session whose RecordFunction
#: callbacks were removed in the call (``_clear_callbacks``: still enabled, recording nothing; red team
#: s30 c3) has none.
END_MARK = "kernelsynth::end"
#: The names of the harness's marks: a range of one of these names that the harness did not open (the
#: counts differ) means the candidate opened it (red team s30 c1 wrapped a library flip in a forged
#: launch mark, c2 put a forged call mark in a session it had restarted).
MARK_PREFIX = "kernelsynth::"

from torch.overrides import TorchFunctionMode  # noqa: E402

#: The profiler's C entry points, bound before any candidate is imported (a candidate that patches
#: ``torch.profiler.profile.events`` or ``torch.autograd._disable_profiler`` changes nothing here:
#: redteam_s10 mi1).
from torch.autograd import (ProfilerConfig as _ProfilerConfig, ProfilerState as _ProfilerState,  # noqa: E402
                            _disable_profiler as _DISABLE, _profiler_enabled as _ENABLED)
from torch._C._profiler import _ExperimentalConfig  # noqa: E402

_MARK_ENTER = torch._C._autograd._record_function_with_args_enter
_MARK_EXIT = torch._C._autograd._record_function_with_args_exit
#: The per-call profiler is torch's CPU-only RecordFunction profiler (``ProfilerState.CPU``, the one
#: ``torch.autograd.profiler.profile(use_kineto=False)`` runs): the same operators at every depth as a
#: Kineto CPU session, on the calling thread like it, for about 1/20 of the start-and-stop cost
#: (0.016 against 0.3 ms per call on this project's CPU machine, session 30; a Kineto session is
#: prepared, started and stopped per call, and each start and stop also logs a line). Its events are
#: push/pop pairs per thread, turned into spans by :func:`_spans`.
_ENABLE_CPU = torch._C._autograd._enable_profiler_legacy
_DISABLE_CPU = torch._C._autograd._disable_profiler_legacy
#: which profiler runs (the C original: candidates see a wrapper, _hide_profiler_state)
_PROFILER_TYPE = torch._C._autograd._profiler_type
_LEGACY = torch._C._profiler.ActiveProfilerType.LEGACY


#: The profiler's and RecordFunction's C entry points: called in a verified call (not by the harness,
#: which holds the originals) they switch the per-call session's recording off, end or restart it, or
#: open ranges in it -- RecordFunction off (session 10), a session stopped and started again around a
#: hidden library call, its callbacks removed (red team s30 c2, c3), a forged launch mark (c1). Such a
#: call is labelled ``census:<name>`` (:func:`_label_profiler_doors`).
PROFILER_DOORS = ("_enable_record_function", "_enable_profiler", "_disable_profiler", "_prepare_profiler",
                  "_enable_profiler_legacy", "_disable_profiler_legacy", "_clear_callbacks",
                  "_toggle_collection_dynamic", "_record_function_with_args_enter",
                  "_record_function_with_args_exit")


def _label_profiler_doors() -> None:
    """Replace every ``torch`` module attribute holding one of :data:`PROFILER_DOORS`' C originals
    with a wrapper that labels the verified call it is called in (``census:<name>``, outside a
    Triton launch) and then calls the original."""
    originals = {name: getattr(torch._C._autograd, name) for name in PROFILER_DOORS
                 if callable(getattr(torch._C._autograd, name, None))
                 and not getattr(getattr(torch._C._autograd, name), "_kernelsynth_watch", False)}

    def labelled(name, original):
        def door(*a, **k):
            census = _STATE["census"]
            if census is not None and not _STATE["in_launch"]:
                census.add(f"census:{name}")
            return original(*a, **k)
        door._kernelsynth_watch = True
        door.__name__ = name
        return door

    _rebind_in_torch(originals, {name: labelled(name, orig) for name, orig in originals.items()})


def _rebind_in_torch(originals: Dict[str, Any], wrappers: Dict[str, Any]) -> None:
    """Every attribute of a loaded ``torch`` module (``torch.autograd``, ``torch._C._autograd``,
    modules that imported them) holding ``originals[name]`` itself is set to ``wrappers[name]``."""
    for modname, module in list(sys.modules.items()):
        if not (modname == "torch" or modname.startswith("torch.")) or module is None:
            continue
        d = getattr(module, "__dict__", {})
        for name, orig in originals.items():
            if d.get(name) is orig:
                setattr(module, name, wrappers[name])


def _hide_profiler_state() -> None:
    """Make the per-call profiler of :func:`watching` invisible to the queries a candidate would
    ask (redteam_s10 mh1 took its honest path when ``torch.autograd._profiler_enabled()``): while that
    session runs, outside a launch, ``_profiler_enabled()`` answers False and ``_profiler_type()``
    ``ActiveProfilerType.NONE`` -- what a timed call, which runs without it, would see. Every module
    attribute holding the C originals (``torch.autograd``, ``torch._C._autograd``, modules that
    imported them) is replaced; the harness keeps the originals (``_ENABLED``)."""
    originals = {"_profiler_enabled": (_ENABLED, False),
                 "_profiler_type": (_PROFILER_TYPE, torch._C._profiler.ActiveProfilerType.NONE)}

    def hidden(original, answer):
        def query(*a, **k):
            if _STATE["profiling"] and not _STATE["in_launch"]:
                return answer
            return original(*a, **k)
        query._kernelsynth_watch = True
        query.__name__ = original.__name__
        return query

    _rebind_in_torch({name: orig for name, (orig, _) in originals.items()},
                     {name: hidden(orig, answer) for name, (orig, answer) in originals.items()})


def _profiler_config():
    return _ProfilerConfig(_ProfilerState.CPU, False, False, False, False, False, _ExperimentalConfig())


class _Span(NamedTuple):
    """One RecordFunction range of the per-call profiler: ns from the session's start, ``thread`` the
    profiler's thread id."""
    name: str
    start: float
    end: float
    thread: int


def _spans(threads) -> List[_Span]:
    """The ranges of a CPU-profiler session's events (``_disable_profiler_legacy()``: one list of
    push/pop/mark events per thread), each push paired with the pop of the same RecordFunction
    handle (as torch's own ``profiler_legacy`` parser pairs them: by position, a range the
    candidate opened and left open inside a launch made the harness's pops close the wrong pushes
    and every later operator read as Triton's, red team s30 c4); a push never popped ends at the
    session's end. Times are the events' CPU clock relative to the first event of the first thread."""
    firsts = [t[0] for t in threads if t]
    if not firsts:
        return []
    base = firsts[0]
    out, opened, end = [], {}, 0.0
    for events in threads:
        for e in events:
            at = base.cpu_elapsed_us(e) * 1e3
            end = max(end, at)
            kind = e.kind()
            if kind == "push":
                opened[e.handle()] = (e.name(), at, e.thread_id())
            elif kind == "pop":
                got = opened.pop(e.handle(), None)
                if got is not None:
                    out.append(_Span(got[0], got[1], at, got[2]))
    return out + [_Span(name, start, end, tid) for name, start, tid in opened.values()]


def _mark(name: str):
    """Begin the per-call session's mark ``name`` (None outside one, or when the running session
    is not the harness's: :func:`_unmark` exits a mark only under the session it began in)."""
    if not _STATE["profiling"] or _PROFILER_TYPE() != _LEGACY:
        return None
    _STATE["marks"][name] = _STATE["marks"].get(name, 0) + 1
    return _MARK_ENTER(name)


def _unmark(handle) -> None:
    """Close the mark ``handle`` (from :func:`_mark`) under the harness's session; under another one
    (the candidate replaced it during the launch) keep it open until :func:`watching` has stopped that
    session: closed there, or freed there (a freed handle closes its range), it aborted or hung the
    process (red team s33: a Kineto session started in a grid callable, 10 runs of 10)."""
    if handle is None:
        return
    if _PROFILER_TYPE() == _LEGACY:
        _MARK_EXIT(handle)
    else:
        _STATE["held_marks"].append(handle)


class HostDoorMode(TorchFunctionMode):
    """The torch-function mode every verified call runs under (:func:`watching`): records
    ``host:<method>`` for :data:`TENSOR_HOST_METHODS` (and :data:`TENSOR_STORAGE_METHODS` on CPU
    tensors), ``host:<function>(callback)`` for a torch function given a Python callable (it runs
    the callable with the modes popped, unseen), and counts scalar reads. Triton's own work inside
    a launch is not counted."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if not _STATE["in_launch"] and not _STATE["quiet"]:
            name = getattr(func, "__name__", "")
            if name in TENSOR_HOST_METHODS:
                _note_host(name)
            elif name in TENSOR_STORAGE_METHODS:
                if sys._getframe(1).f_code in _harness_codes():  # the harness's own pointer reads
                    _STATE["quiet"] += 1
                    try:
                        return func(*args, **(kwargs or {}))
                    finally:
                        _STATE["quiet"] -= 1
                if args and getattr(getattr(args[0], "device", None), "type", None) == "cpu":
                    _note_host(name)
            elif name in SCALAR_METHODS:
                _STATE["scalars"] += 1
            elif any(_is_callback(a) for a in (*args, *(kwargs or {}).values())):
                _note_host(f"{name}(callback)")
        return func(*args, **(kwargs or {}))


_HARNESS_CODES: list = []


def _harness_codes() -> frozenset:
    """Code objects of the harness's functions that read a storage's data pointer inside a verified
    call (``verify.poison``'s ownership checks run inside its dispatch mode, where
    :class:`HostDoorMode` sees them): a storage door called directly by one of them is not the
    candidate's. Judged by code identity, which a candidate cannot forge by a name or a file name."""
    if not _HARNESS_CODES:
        codes = set()
        for modname in ("kernelsynth.verify.poison", __name__):
            for v in vars(sys.modules.get(modname) or object()).values():
                if getattr(v, "__module__", None) == modname and hasattr(v, "__code__"):
                    codes.add(v.__code__)
        _HARNESS_CODES.append(frozenset(codes))
    return _HARNESS_CODES[0]


def _is_callback(a) -> bool:
    return callable(a) and not isinstance(a, (torch.Tensor, type, torch.nn.Module))


def _recorder():
    """``(add, read, forget)`` over per-census sets of profiled operator names held in a closure:
    not an attribute of the census or of any dispatch mode a call can reach (redteam_s10 mi1
    discarded ``addmm`` from the mode's set)."""
    seen: Dict[int, set] = {}

    def add(census, names) -> None:
        seen.setdefault(id(census), set()).update(names)

    def read(census) -> frozenset:
        return frozenset(seen.get(id(census), ()))

    def forget(census) -> None:
        seen.pop(id(census), None)

    return add, read, forget


_record_profiled, profiled_of, _forget_profiled = _recorder()
profiled_of.__doc__ = """The census names of the operators the per-call profiler recorded in the verified
calls of ``census`` (any depth, launches left out; judged by :func:`profiled_library_calls`), a frozenset."""


def candidate_ops(events) -> List[str]:
    """Census names (``aten::`` stripped) of the profiled operator events (:func:`_spans` of one
    call) that are the candidate's: any event named ``namespace::op`` outside the marks, or whose
    innermost enclosing mark is a :data:`CANDIDATE_MARK`; events inside a :data:`LAUNCH_MARK` are
    Triton's -- on the launch's own thread only (an operator of torch's inter-op pool, forked by the
    candidate, recorded while a launch ran on the calling thread is the candidate's: red team s30b
    j2). One entry per event (a list: scalar reads are counted)."""
    marks = sorted((m.start, m.end, m.name == LAUNCH_MARK, m.thread) for m in events
                   if m.name in (LAUNCH_MARK, CANDIDATE_MARK))
    out = []
    for e in events:
        if "::" not in e.name or e.name.startswith(MARK_PREFIX):
            continue
        inner = False
        for lo, hi, launch, thread in marks:  # sorted by start: the last one containing it is the innermost
            if lo > e.start:
                break
            if e.start <= hi and thread == e.thread:
                inner = launch
        if not inner:
            out.append(e.name.removeprefix("aten::"))
    return out


@contextmanager
def watching(census: Optional[Census], inputs: Sequence[torch.Tensor]):
    """Around one verified call: route the host-door and copy records to ``census`` (a
    :class:`Census`, or a plain set of names), count the call and whether it launched a Triton
    kernel (a :class:`Census` only). Yields ``(starts)``: a callable giving the
    number of Python threads started since the call began.

    With a :class:`Census` the call also runs under two views no dispatch mode controls
    (VERIFICATION.md rule 14): :class:`HostDoorMode` (``TensorBase`` host doors, scalar reads) and
    the CPU-activity profiler (RecordFunction, below the dispatcher's Python key: operators run under
    ``torch._C._DisableTorchDispatch()`` or an excluded Python key are recorded; redteam_s10 mh1),
    whose operators go to :func:`profiled_of`. A census that lost names during the call, a
    profiler session already running or ended by the call raise TamperingError / VerificationFailure."""
    from .failures import TamperingError, VerificationFailure

    before_threads, before_launches = _STATE["threads"], sum(_STATE["launches"].values())
    previous = _STATE["census"]
    full = isinstance(census, Census)  # a plain set receives the names only
    profiling = full and not _STATE["profiling"]
    if full:
        census.input_storages = frozenset(_S.data_ptr(_storage(x)) for x in inputs
                                          if isinstance(x, torch.Tensor))
        held = set(census)
    if profiling and _ENABLED():
        raise VerificationFailure("a profiler was already running when a verified call began: the census cannot "
                                  "run its own (VERIFICATION.md rule 14)")
    if census is not None:
        _STATE["census"] = census
    watch = full and not _STATE["numpy_watch"]  # host array libraries called at run time (numpy)
    hook_before = sys.getprofile() if watch else None
    if watch:
        _STATE["numpy_watch"] = True
        sys.setprofile(_numpy_profile)
    scalars_before = _STATE["scalars"]
    mode = HostDoorMode() if full else contextlib.nullcontext()
    call_mark = None
    if profiling:
        _ENABLE_CPU(_profiler_config())
        _STATE["profiling"] = True
        _STATE["marks"] = {}
        call_mark = _mark(CALL_MARK)
    try:
        with mode:
            yield lambda: _STATE["threads"] - before_threads
    finally:
        if watch:
            if sys.getprofile() is not _numpy_profile:  # the candidate replaced the hook: numpy unseen
                _note_host("setprofile")
            _STATE["numpy_watch"] = False  # first: the hook ignores its own removal
            sys.setprofile(hook_before)
        _STATE["census"] = previous
        events = None
        if profiling:
            _STATE["profiling"] = False
            if _ENABLED() and _PROFILER_TYPE() == _LEGACY:
                _MARK_EXIT(call_mark)
                _STATE["marks"][END_MARK] = 1
                _MARK_EXIT(_MARK_ENTER(END_MARK))
                events = _stop_cpu_profiler()
            elif _ENABLED():
                # another session in the harness's place (the candidate ended it and started a Kineto
                # one): ended unmarked. The call's mark, begun under the harness's session and exited
                # under the other, aborted the process in glibc (a robust mutex whose owner was gone) or
                # hung it within 40 such calls, 5 runs of 5 (session 33; CI's run of session 32 hung); the call's
                # and the launches' open marks are freed only once it has stopped (_unmark)
                events = _stop_cpu_profiler()
            call_mark = None
            _STATE["held_marks"].clear()
        if full:
            census.calls += 1
            if sum(_STATE["launches"].values()) == before_launches:
                census.calls_without_launch += 1
    if full:
        if not held <= census:
            raise TamperingError(f"the census lost {sorted(held - census)[:4]} during a verified call: its record was "
                                 "edited from inside the call (VERIFICATION.md rules 13-14)")
        if profiling:
            seen: Dict[str, int] = {}
            for e in events or ():
                if e.name.startswith(MARK_PREFIX):
                    seen[e.name] = seen.get(e.name, 0) + 1
            if events is None or CALL_MARK not in seen or END_MARK not in seen:
                raise VerificationFailure("the census's profiler session was ended or replaced during a verified "
                                          "call (VERIFICATION.md rule 14)")
            opened = _STATE["marks"]
            if seen != opened:
                odd = [f"{n}: {seen.get(n, 0)} recorded, {opened.get(n, 0)} opened by the harness"
                       for n in sorted(set(seen) | set(opened)) if seen.get(n, 0) != opened.get(n, 0)]
                raise VerificationFailure("ranges named like the census's marks that the harness did not open were "
                                          f"recorded in a verified call ({'; '.join(odd[:4])}; VERIFICATION.md rule 14)")
        ops = candidate_ops(events) if profiling else []
        _record_profiled(census, ops)
        scalars = max(_STATE["scalars"] - scalars_before, ops.count("_local_scalar_dense"))
        if scalars > SCALAR_READS_MAX:
            census.add("host:item")


def _stop_cpu_profiler():
    """End the per-call CPU profiler session: its :func:`_spans`, or None when the running session
    is not one (the candidate ended it, or replaced it with a Kineto session, which is ended too)."""
    kind = _PROFILER_TYPE()
    if kind == _LEGACY:
        try:
            return _spans(_DISABLE_CPU())
        except RuntimeError:
            pass
    if _ENABLED():  # a Kineto session in its place: ended by Kineto's stop (the CPU profiler's stop can
        try:        # block on one: a suite run hung there, session 30), after no mark (watching, session 33)
            _DISABLE()
        except RuntimeError:
            pass
    return None


def note_copy(census, name: str, args) -> None:
    """Record ``<name>(input)`` in ``census`` when it is a data-movement census
    (:attr:`Census.movement`) and the copying operator ``name`` (:data:`COPY_OPS`) reads an
    input's storage (outside an interpreter launch, whose own copies are the interpreter's)."""
    if not getattr(census, "movement", False) or name not in COPY_OPS or _STATE["in_launch"]:
        return
    src = args[1] if name == "copy_" and len(args) > 1 else (args[0] if args else None)
    _STATE["quiet"] += 1  # the harness's own storage read (HostDoorMode does not count it)
    try:
        if isinstance(src, torch.Tensor) and _S.data_ptr(_storage(src)) in census.input_storages:
            census.add(f"{name}(input)")
    finally:
        _STATE["quiet"] -= 1


#: Composite operators (never seen by a dispatch mode, recorded by the profiler around their
#: parts) that do no arithmetic: their parts are judged one by one.
PROFILED_LAYOUT = frozenset({
    "to", "contiguous", "reshape", "flatten", "pad", "type_as", "expand_as", "view_as", "resolve_conj",
    "resolve_neg", "lift_fresh", "detach", "alias", "squeeze", "unsqueeze", "t", "numpy_T", "chunk", "split",
    "unbind", "narrow", "movedim", "moveaxis", "swapaxes", "swapdims", "unflatten", "empty_like", "zeros_like",
    "ones_like", "full_like", "new_zeros", "new_ones", "new_full", "_nnpack_available", "item",
    "_local_scalar_dense", "is_nonzero", "align_tensors", "broadcast_to", "expand", "fill_", "zero_", "detach_",
    "as_strided_", "mT", "mH", "T", "H", "adjoint", "matrix_H", "expand_copy", "view_as_real", "view_as_complex",
})


def profiled_ops(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device):
    """One call of ``candidate`` under torch's profiler (``torch.autograd.profiler.profile``, CPU): ``(output, ops)``, ``ops``
    the sorted census names of every operator RecordFunction saw, at any depth (``aten::``
    stripped, other namespaces kept). RecordFunction runs below the dispatcher's Python key, so
    operators hidden from dispatch modes (``_ExcludeDispatchKeyGuard`` of the Python key,
    ``_disable_current_modes``) and those of torch's own worker threads (``torch.jit._fork``)
    are recorded; operators of another Python thread are not, so a Python thread started during
    the call fails it (VerificationFailure, rule 11)."""
    # torch.autograd.profiler.profile, the class torch.profiler.profile runs for CPU activity: the
    # latter's start asks hasattr(torch, "_inductor"), which imports torch._inductor and torch._dynamo
    # (about 3 s of CPU in a worker that had neither; dynamo_deferral)
    from torch.autograd.profiler import profile

    from .failures import VerificationFailure

    with torch.no_grad(), profile(use_cpu=True, use_kineto=True) as prof:
        starts_before = thread_starts()
        out = candidate(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        started = thread_starts() - starts_before
    if started:
        raise VerificationFailure("a thread was started during the profiled call (census): threads are not "
                                  "allowed (VERIFICATION.md rule 11)")
    names = {e.name for e in prof.function_events if "::" in e.name}
    return out, sorted(n.removeprefix("aten::") for n in names)


def profiled_library_calls(ops: Iterable[str], reference_ops: Sequence[str] = ()) -> List[str]:
    """The operators of :func:`profiled_ops` that do arithmetic: :func:`library_calls` with the
    composite layout operators of :data:`PROFILED_LAYOUT` allowed too."""
    ref = set(reference_ops or ())
    return sorted(o for o in set(ops) if (o not in LAYOUT_OPS and o not in PROFILED_LAYOUT) or o in ref)
