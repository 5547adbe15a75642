"""The integrity guard, the process fingerprint and the thread check (VERIFICATION.md rules 11,
13 and 19). Runs in a worker."""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
import types
from operator import attrgetter, is_
from typing import Dict, Optional

import torch

from . import dynamo_deferral
from .census import _numpy_profile  # bound at import: the census's own profile hook
from .failures import TamperingError, VerificationFailure

#: Namespaces whose callables a candidate must not replace: the reference and the harness use them.
#: ``torch.cuda.Event`` is a class: its methods (``elapsed_time``, ``record``) are what do_bench's
#: timer calls. ``time`` serves the host-synced timing; ``os``/``posix``/``signal`` hold the signal
#: guard of :mod:`kernelsynth.sandbox`. ``kernelsynth.verify`` is the package the harness imports
#: from; its modules are guarded one by one (each holds the names it calls).
GUARDED = ("torch", "torch.nn.functional", "torch.Tensor", "torch._C.TensorBase", "torch.nn.Module", "torch.cuda",
           "torch.cuda.Event",
           "torch.testing",
           "triton.testing", "kernelsynth.verify", "kernelsynth.verify.failures", "kernelsynth.verify.guard",
           "kernelsynth.verify.poison", "kernelsynth.verify.inputs", "kernelsynth.verify.comparison",
           "kernelsynth.verify.transport", "kernelsynth.verify.census", "kernelsynth.verify.params",
           "kernelsynth.verify.protocol", "kernelsynth.verify.precision", "kernelsynth.verify.refmemo",
           "kernelsynth.verify.dynamo_deferral",
           "kernelsynth.interpreter",
           "kernelsynth.timing", "kernelsynth.jobs", "kernelsynth.sandbox",
           "builtins", "time", "os", "posix", "signal",
           # the census's counters (kernelsynth.verify.census.install_watch): thread starts, Triton launches
           "_thread", "threading", "triton.runtime.jit.JITFunction", "triton.runtime.interpreter.GridExecutor",
           "triton.runtime.autotuner.Autotuner", "triton.runtime.autotuner.Heuristics",
           # the census's views (rule 14): its dispatch and torch-function modes, the profiler (redteam_s10 mi1
           # patched torch.profiler.profile.events), RecordFunction's switch
           "torch.profiler", "torch.profiler.profile", "torch.profiler.profiler._KinetoProfile", "torch.autograd",
           "torch.autograd.profiler.profile",
           "torch.autograd.profiler", "torch._C._autograd", "torch.utils._python_dispatch",
           "torch.utils._python_dispatch.TorchDispatchMode", "torch.overrides", "torch.overrides.TorchFunctionMode",
           # the operator handle, whose redispatch_boxed the census wraps (redteam_s11 co1)
           "torch._C._DispatchOperatorHandle",
           # the harness's dispatch modes (their __torch_dispatch__ records and poisons: rules 2 and 14)
           *dynamo_deferral.MODES)


def _namespace(name: str):
    if name == "torch.Tensor":
        return torch.Tensor
    if name == "torch._C.TensorBase":  # torch.Tensor's C base: a new attribute on Tensor shadows it
        return torch._C.TensorBase
    if name == "torch.cuda.Event":
        return torch.cuda.Event
    if name == "torch.nn.Module":  # __call__ runs the reference: a patched one could answer for it
        return torch.nn.Module
    if name in _EXTRA_GUARDED:
        return _EXTRA_GUARDED[name]
    if name in _CLASSES:  # a class: its attribute dict is the namespace
        try:
            return getattr(importlib.import_module(name.rsplit(".", 1)[0]), name.rsplit(".", 1)[1])
        except (ImportError, AttributeError):
            return None
    if name.startswith("triton.runtime.") and name.rsplit(".", 1)[1][:1].isupper():  # a class
        try:
            return getattr(importlib.import_module(name.rsplit(".", 1)[0]), name.rsplit(".", 1)[1])
        except (ImportError, AttributeError):
            return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


#: Namespaces guarded for the current job besides GUARDED (the task's reference module and its
#: ``Model`` class: a candidate that rebinds ``get_inputs`` or ``Model.forward`` changes the test).
_EXTRA_GUARDED: Dict[str, object] = {}


def guard_also(**namespaces) -> None:
    """Guard these modules or classes too (``name=object``), replacing the previous extras; call
    before :func:`integrity_snapshot`."""
    _EXTRA_GUARDED.clear()
    _EXTRA_GUARDED.update(namespaces)


class Snapshot(dict):
    """``{"module.attr": id(value)}`` (a dict), plus :attr:`quick`: per namespace the tuples of
    its attribute names and of their values (strong references: an original cannot be freed and
    its id reused), which :func:`check_integrity` compares first by identity (C-speed; the full
    comparison runs only for a namespace where one differs), and :attr:`numeric`: the
    :func:`numeric_flags` when it was taken."""

    quick: Dict[str, tuple]
    numeric: Dict[str, object]


def _quick(ns) -> tuple:
    d = vars(ns)
    return tuple(d), tuple(d.values())


def _same(saved: tuple, ns) -> bool:
    """Whether namespace ``ns`` holds exactly the names and value objects of ``saved`` (a
    :func:`_quick` tuple), in order: compared by identity (``operator.is_``, no ``__eq__`` of a
    value runs: a replacement that claims equality is still a different object), without building
    new tuples. Any difference (also a rebinding to the same object after a delete) answers False."""
    d = vars(ns)
    names, values = saved
    return len(d) == len(names) and all(map(is_, d, names)) and all(map(is_, d.values(), values))


def _is_harness(name: str) -> bool:
    """Whether a guarded name belongs to kernelsynth itself (a module or a class it defines)."""
    return name == "kernelsynth" or name.startswith("kernelsynth.")


def _harness_modules() -> tuple:
    """Every ``kernelsynth`` module loaded in this process and not in :data:`GUARDED`
    (``kernelsynth.contract``, whose ``EvaluateResult`` carries the verdict, ``kernelsynth.backends``
    and the backend loaded for the job, ``kernelsynth.spec``, ...: an ``EvaluateResult.__setattr__``
    that dropped the verdict, or a ``counts_launches`` that always answers False, passed before;
    session 21)."""
    return tuple(sorted(n for n, m in list(sys.modules.items())
                        if _is_harness(n) and n not in GUARDED and inspect.ismodule(m)))


def _guarded():
    """``(name, namespace)`` of every guarded namespace, each ``kernelsynth`` module followed by
    the classes it defines (:func:`_own_classes`)."""
    for name in GUARDED + _harness_modules() + tuple(_EXTRA_GUARDED):
        ns = _namespace(name)
        if ns is not None:
            yield name, ns
            yield from _own_classes(name, ns)


def _own_classes(name: str, ns):
    """The classes a guarded ``kernelsynth`` module defines, as namespaces of their own
    (``kernelsynth.verify.precision.PrecisionMeter``): the module's dict holds only the class
    object, so a replaced method (``PrecisionMeter.check``, ``Census.add``) changed nothing the
    guard compared before session 21."""
    if not _is_harness(name) or not inspect.ismodule(ns):
        return
    for attr, val in list(vars(ns).items()):
        if isinstance(val, type) and val.__module__ == ns.__name__ and f"{name}.{attr}" not in _CLASSES:
            yield f"{name}.{attr}", val


def _functions(ns):
    """The plain Python functions among ``ns``'s attributes, with those behind staticmethod,
    classmethod and property."""
    for val in list(vars(ns).values()):
        if isinstance(val, (staticmethod, classmethod)):
            val = val.__func__
        if isinstance(val, property):
            yield from (f for f in (val.fget, val.fset, val.fdel) if isinstance(f, types.FunctionType))
        elif isinstance(val, types.FunctionType):
            yield val


_EMPTY_CELL = object()


def _cells(fn) -> tuple:
    out = []
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # not yet assigned
            out.append(_EMPTY_CELL)
    return tuple(out)


_CODE, _DEFAULTS, _KWDEFAULTS = (attrgetter(a) for a in ("__code__", "__defaults__", "__kwdefaults__"))
_CLOSURE, _CONTENTS = attrgetter("__closure__"), attrgetter("cell_contents")


def _internals(namespaces) -> tuple:
    """The guarded Python functions of ``namespaces`` (``(name, ns)`` pairs) with their code,
    defaults and (for the harness's own functions, ``kernelsynth``, and the dispatch modes' methods,
    torch's wrapper around the raw one; torch's other functions may rebind theirs lazily) closure
    contents. A function keeps its identity when its code, defaults or closure
    cells are swapped (``compare.__code__ = ...``), so the identity of the namespace's values alone
    does not see it (session 21). Returns ``(functions, their __code__, __defaults__,
    __kwdefaults__, [(function, closure contents)], flat)``, strong references; ``flat`` is the
    same closures laid out for one C-level identity pass (:func:`_cells_unchanged`): ``(the closed
    functions, their __closure__ tuples, every cell of them, every cell's contents)``."""
    fns, seen, closed = [], set(), []
    for name, ns in namespaces:
        for fn in _functions(ns):
            if id(fn) not in seen:
                seen.add(id(fn))
                fns.append(fn)
                # closures of the harness's functions and of the modes' methods (torch's wrapper holds the raw one)
                if fn.__closure__ and (_is_harness(fn.__module__ or "") or name in dynamo_deferral.MODES):
                    closed.append(fn)
    fns = tuple(fns)
    cells = [(fn, _cells(fn)) for fn in closed]
    closed = tuple(closed)
    closures = tuple(map(_CLOSURE, closed))
    flat = (closed, closures, tuple(c for cl in closures for c in cl), tuple(x for _, was in cells for x in was))
    return fns, tuple(map(_CODE, fns)), tuple(map(_DEFAULTS, fns)), tuple(map(_KWDEFAULTS, fns)), cells, flat


def _cells_unchanged(saved) -> bool:
    """Whether every closure cell of :func:`_internals`' ``saved`` still holds the very object
    recorded: one identity pass over all cells at C speed (``flat``), the closure tuples compared
    by identity first (``__closure__`` is read-only, so this is what the per-function
    ``_cells(fn)`` comparison reads); a cell that is empty now (reading it raises ValueError)
    answers through that per-function comparison (its ``_EMPTY_CELL`` marker)."""
    cells, (closed, closures, flat_cells, flat_was) = saved[4], saved[5]
    if all(map(is_, map(_CLOSURE, closed), closures)):
        try:
            return len(flat_cells) == len(flat_was) and all(map(is_, map(_CONTENTS, flat_cells), flat_was))
        except ValueError:  # an empty cell: the per-function comparison below (its marker)
            pass
    return all(all(map(is_, _cells(fn), was)) for fn, was in cells)


def _internals_changed(saved) -> list:
    """Qualified names of the functions of ``saved`` (:func:`_internals`) whose code, defaults or
    closure contents are no longer the very objects recorded (identity, C-speed first)."""
    if not saved:
        return []
    fns, codes, defaults, kwdefaults, cells = saved[:5]
    if all(map(is_, map(_CODE, fns), codes)) and all(map(is_, map(_DEFAULTS, fns), defaults)) and \
            all(map(is_, map(_KWDEFAULTS, fns), kwdefaults)) and _cells_unchanged(saved):
        return []
    changed = [fn for fn, c, d, k in zip(fns, codes, defaults, kwdefaults)
               if fn.__code__ is not c or fn.__defaults__ is not d or fn.__kwdefaults__ is not k]
    changed += [fn for fn, was in cells if not all(map(is_, _cells(fn), was))]
    return [f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}" for fn in changed]


#: Process-wide numeric settings (VERIFICATION.md rule 13, session 27): each changes how the harness's
#: own computations round or where they run -- the reference at the job dtype, the honest computations
#: of rule 23 (cuDNN's autotuner and determinism switches choose its algorithms), the device of the
#: tensors the harness makes -- without replacing any function (redteam_s10 mp3 lowered the float32
#: matmul precision at import; red team s26 named the rest). Read by name; a read that raises is
#: recorded by its exception's type.
NUMERIC_FLAGS = ("torch.get_float32_matmul_precision()", "torch.get_default_dtype()", "torch.get_default_device()",
                 "torch.are_deterministic_algorithms_enabled()", "torch.backends.cudnn.benchmark",
                 "torch.backends.cudnn.deterministic",
                 "torch.backends.cuda.matmul.allow_tf32",
                 "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                 "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
                 "torch.backends.cudnn.allow_tf32", "torch.backends.cudnn.enabled", "torch.backends.mkldnn.enabled",
                 "torch.backends.fp32_precision", "torch.backends.cuda.matmul.fp32_precision",
                 "torch.backends.cudnn.fp32_precision", "torch.backends.cudnn.conv.fp32_precision",
                 "torch.backends.cudnn.rnn.fp32_precision", "torch.backends.mkldnn.fp32_precision",
                 "torch.backends.mkldnn.matmul.fp32_precision", "torch.backends.mkldnn.conv.fp32_precision",
                 "torch.backends.cuda.flash_sdp_enabled()", "torch.backends.cuda.mem_efficient_sdp_enabled()",
                 "torch.backends.cuda.math_sdp_enabled()", "torch.backends.cuda.cudnn_sdp_enabled()",
                 "torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()")
_DENORMAL = torch.full((1,), 2.0 ** -130)  # a float32 subnormal: flushed to zero under set_flush_denormal(True)
_MUL, _TOLIST = torch._C.TensorBase.mul, torch._C.TensorBase.tolist  # bound at import, as the census's hook


_FLAG_READERS: list = []  # (name, owner object, attribute, called), resolved once: the objects the settings live on


def _readers() -> list:
    if not _FLAG_READERS:
        for expr in NUMERIC_FLAGS:
            path, _, attr = expr.removesuffix("()").rpartition(".")
            try:
                owner = eval(path, {"torch": torch})  # noqa: S307 - the fixed names above
            except Exception:  # noqa: BLE001 - a build without this backend
                owner = None
            _FLAG_READERS.append((expr, owner, attr, expr.endswith("()")))
    return _FLAG_READERS


def _read_flag(owner, attr: str, called: bool):
    try:
        value = getattr(owner, attr)
        return value() if called else value
    except Exception as e:  # noqa: BLE001 - a build without the setting
        return f"<unreadable: {type(e).__name__}>"  # e.g. a legacy TF32 getter once fp32_precision mixed the APIs


_FP32_ROOT = "torch.backends.fp32_precision"


def _fp32_parent(name: str) -> str:
    """The ``fp32_precision`` setting ``name`` inherits from when it is "none" (PyTorch's hierarchy:
    ``cudnn.conv`` -> ``cudnn`` -> the root ``torch.backends``)."""
    owner = name.removesuffix(".fp32_precision")
    while "." in owner and owner != "torch.backends":
        owner = owner.rpartition(".")[0]
        if f"{owner}.fp32_precision" in NUMERIC_FLAGS:
            return f"{owner}.fp32_precision"
    return _FP32_ROOT


def _resolved_fp32(flags: Dict[str, object]) -> None:
    """Replace each ``fp32_precision`` value "none" (not set: inherited) by what it inherits, the
    root's "none" meaning "ieee": setting a precision and restoring it through the legacy API
    (``set_float32_matmul_precision(old)``, ``allow_tf32 = old``) writes "ieee" where "none" was,
    with the same meaning (red team s27 h1: an honest set-and-restore was called tampering)."""
    def value(name):
        v = flags.get(name)
        if v != "none":
            return v
        return "ieee" if name == _FP32_ROOT else value(_fp32_parent(name))
    for name in [k for k in flags if k.endswith(".fp32_precision")]:
        flags[name] = value(name)


def numeric_flags() -> Dict[str, object]:
    """``{name: value}`` of :data:`NUMERIC_FLAGS` in this process (``fp32_precision`` values
    resolved through their hierarchy: :func:`_resolved_fp32`), autocast's state on this thread for
    the CPU and CUDA (enabled, its dtype; and its cache), and ``flush_denormal``: whether float32
    subnormals are flushed to zero on this thread (``torch.set_flush_denormal`` has no getter: a
    subnormal times one is zero then). Autocast left on at import changes the harness's own
    float32 computations (red team s27 ma1, ma2)."""
    flags = {name: _read_flag(owner, attr, called) for name, owner, attr, called in _readers()}
    _resolved_fp32(flags)
    for dev in ("cpu", "cuda"):
        try:
            flags[f"autocast {dev}"] = (torch.is_autocast_enabled(dev), torch.get_autocast_dtype(dev))
        except Exception as e:  # noqa: BLE001 - a build without that device's autocast
            flags[f"autocast {dev}"] = f"<{type(e).__name__}>"
    flags["autocast cache"] = torch.is_autocast_cache_enabled()
    flags["flush_denormal"] = _TOLIST(_MUL(_DENORMAL, 1.0))[0] == 0.0
    return flags


def numeric_changes(before: Dict[str, object]) -> list:
    """``"name before -> now"`` for every numeric setting that differs from ``before``."""
    now = numeric_flags()
    return [f"{k} {before.get(k)!r} -> {v!r}" for k, v in now.items() if before.get(k) != v]


#: The numeric settings of the last :func:`integrity_snapshot` (a tuple: not editable in place), which
#: :func:`check_numeric` compares after every verified call.
_NUMERIC_BASELINE: Optional[tuple] = None


def _numeric_error(changed: list) -> TamperingError:
    return TamperingError("the candidate changed process-wide numeric settings: " + "; ".join(changed[:6])
                          + " -- a kernel may change them inside its call only if it restores them before returning")


def _check_numeric_against(baseline: Optional[Dict[str, object]]) -> None:
    changed = numeric_changes(baseline) if baseline is not None else []
    if changed:  # the harness's references and honest computations would round differently (rule 13)
        raise _numeric_error(changed)


def check_numeric() -> None:
    """After every verified call of an untrusted candidate (``verify.poison.call_poisoned``) and
    before the harness computes from its output: raise TamperingError when a numeric setting
    differs from the last snapshot's. The check after each trial (:func:`check_integrity`) alone
    left a window: a setting changed at the end of one call and put back at the start of the next
    call of the same trial (the staleness check's) had the harness's honest computations run under
    it in between (red team s27 mm1)."""
    _check_numeric_against(None if _NUMERIC_BASELINE is None else dict(_NUMERIC_BASELINE))


def integrity_snapshot(baseline: bool = True) -> Dict[str, int]:
    """``{"module.attr": id(value)}`` for every callable or module in the :data:`GUARDED`
    namespaces and those given to :func:`guard_also` (a :class:`Snapshot`). ``baseline``: also
    make its numeric settings the ones :func:`check_numeric` compares with (a job's snapshot; not
    the one :func:`check_integrity` takes to compare, which must rebind nothing here)."""
    snap = Snapshot()
    snap.quick = {}
    snap.numeric = numeric_flags()
    if baseline:  # first: this module's own attributes are recorded below, the baseline among them
        global _NUMERIC_BASELINE
        _NUMERIC_BASELINE = tuple(snap.numeric.items())
    # the deferred modes with the wrappers the dynamo hook may put back (taken now, before the candidate
    # runs: the only values a mode's __torch_dispatch__ may change to) and the hook itself
    snap.deferral = dynamo_deferral.state()
    # every namespace resolved (imported) before any is recorded: an import's side effects (kernelsynth.jobs
    # imports torch._dynamo, which rebinds torch.manual_seed) must not land between two records
    resolved = list(_guarded())
    snap.namespaces = resolved
    snap.modules = {name: ns for name, ns in resolved if inspect.ismodule(ns) and sys.modules.get(name) is ns}
    for name, ns in resolved:
        snap.quick[name] = _quick(ns)
        own = _is_harness(name) and name not in _EXTRA_GUARDED
        for attr, val in list(vars(ns).items()):
            # elsewhere flags and counters may change legitimately; the harness's own modules and classes
            # rebind nothing after import (a rebound precision.TAIL_MARGIN or census.LAYOUT_OPS: session 21)
            if own or callable(val) or inspect.ismodule(val):
                snap[f"{name}.{attr}"] = id(val)
    snap.internals = _internals(resolved)
    return snap


#: Guarded classes of the profiler and the mode machinery (resolved as module attributes).
_CLASSES = ("torch.profiler.profile", "torch.profiler.profiler._KinetoProfile", "torch.autograd.profiler.profile",
            "torch.utils._python_dispatch.TorchDispatchMode", "torch.overrides.TorchFunctionMode",
            *dynamo_deferral.MODES)
#: Guarded classes: there, an attribute that appears is as bad as one that is replaced (a new
#: ``torch.profiler.profile.events`` shadows ``_KinetoProfile.events``: redteam_s10 mi1).
_CLASS_NAMESPACES = ("torch.Tensor", "torch._C.TensorBase", "torch.nn.Module", "torch.cuda.Event") + _CLASSES


def trace_hooks() -> list:
    """The Python trace and profile hooks set in this process, by name, other than the census's own
    profile hook (``verify.census._numpy_profile``, set only inside a verified call): a trace
    function may rewrite any frame's local variables (on CPython 3.11 its ``f_locals`` edits are
    written back), so one left set lets candidate code change the harness's verdicts as they are
    computed (session 21's attack a10: ``compare``'s ``has_bad`` set to 0). Checked after every
    verified call (``verify.poison.call_poisoned``) and in every integrity check."""
    found = []
    if sys.gettrace() is not None:
        found.append("sys.settrace")
    if sys.getprofile() not in (None, _numpy_profile):
        found.append("sys.setprofile")
    for name in ("gettrace", "getprofile"):  # threading.settrace/setprofile: hooks of threads started later
        get = getattr(threading, name, None)
        if get is not None and get() is not None:
            found.append(f"threading.{name.replace('get', 'set')}")
    return found


def check_trace_hooks() -> None:
    """Raise TamperingError when :func:`trace_hooks` finds one."""
    hooks = trace_hooks()
    if hooks:
        raise TamperingError(f"the candidate left {', '.join(hooks)} set: a trace or profile function can rewrite "
                             "the harness's local variables while it checks the output (VERIFICATION.md rule 13)")


def _dynamo_generation_tag(key: str, before_id: int) -> bool:
    """True when ``torch.nn.Module.__init__``/``__setstate__`` was replaced by torch.compile's own
    wrapper (``torch._dynamo.mutation_guard.install_generation_tagging_init``, installed at a
    candidate's first compile) around the original: a candidate using torch.compile is not tampering."""
    if key not in ("torch.nn.Module.__init__", "torch.nn.Module.__setstate__"):
        return False
    guard = sys.modules.get("torch._dynamo.mutation_guard")
    fn = vars(torch.nn.Module).get(key.rsplit(".", 1)[1])
    if guard is None or not hasattr(fn, "__code__") or not fn.__closure__:
        return False
    own_code = fn.__code__ in guard.install_generation_tagging_init.__code__.co_consts
    return own_code and any(id(c.cell_contents) == before_id for c in fn.__closure__)


def _restored(before, key: str, now: Dict[str, int]) -> bool:
    """Whether ``key`` changed to the very wrapper object the snapshot recorded for it (the dynamo
    hook's restore): the same code and ``__wrapped__`` are not enough (a forged wrapper whose closure
    holds another function has both; session 20's attack a4)."""
    deferred, _ = getattr(before, "deferral", ((), None))
    return any(f"{name}.__torch_dispatch__" == key and now.get(key) == id(wrapped) for name, _, wrapped in deferred)


def check_integrity(before: Dict[str, int]) -> None:
    """Raise TamperingError naming what changed since ``before`` (replaced or deleted attributes).
    Every namespace whose names and value ids are all as in ``before`` (:attr:`Snapshot.quick`)
    is unchanged (:func:`_same`: identity, in order); only when one differs (or ``before`` is a
    plain dict) is the full snapshot taken and compared. The quick pass is what keeps this check,
    run after every trial, cheap: about 0.32 ms for the ~5000 guarded attributes on this project's
    2-core CPU (0.45-0.5 ms when it built tuples of ids; cost11, bench/cost11_pieces.py)."""
    check_trace_hooks()
    moved = [name for name, ns in getattr(before, "modules", {}).items() if sys.modules.get(name) is not ns]
    if moved:  # a look-alike module in sys.modules would be checked instead of the one the harness uses
        raise TamperingError(f"the candidate replaced {', '.join(sorted(moved)[:6])} in sys.modules")
    tables = getattr(before, "dispatch", None)
    if tables:  # kernels of the reference's operators registered by the candidate (redteam_s11 ft1)
        check_dispatch(tables)
    # a mode left raw after torch._dynamo's import or without its import hook, a forged __dynamo_disable
    raw = dynamo_deferral.intact(getattr(before, "deferral", None))
    if raw:
        raise TamperingError("the candidate tampered with the harness's dispatch modes or their torch._dynamo "
                             "import hook: " + "; ".join(f"{k} {v}" for k, v in raw.items()))
    swapped = _internals_changed(getattr(before, "internals", ()))
    if swapped:
        raise TamperingError(f"the candidate swapped the code, defaults or closure of {', '.join(swapped[:8])}"
                             + (f" and {len(swapped) - 8} more" if len(swapped) > 8 else ""))
    _check_numeric_against(getattr(before, "numeric", None))
    quick = getattr(before, "quick", None)
    if quick is not None:
        # the namespace objects the snapshot recorded (a module swapped in sys.modules is caught above)
        resolved = getattr(before, "namespaces", None) or list(_guarded())
        if len(resolved) == len(quick) and all(name in quick and _same(quick[name], ns) for name, ns in resolved):
            return
    now = integrity_snapshot(baseline=False)
    changed = sorted(k for k, v in before.items() if now.get(k) != v and not _dynamo_generation_tag(k, v)
                     and not _restored(before, k, now))
    # a NEW method on a guarded class shadows the base class's (Tensor.any over TensorBase.any)
    # (and on the harness's own classes: a new Census.add would shadow set.add)
    classes = set(_CLASS_NAMESPACES) | {name for name, ns in now.namespaces if isinstance(ns, type)
                                        and name in (quick or {}) and name not in _EXTRA_GUARDED}
    changed += sorted(k for k in set(now) - set(before) if k.rsplit(".", 1)[0] in classes)
    if changed:
        raise TamperingError(f"the candidate replaced {', '.join(changed[:8])}"
                             + (f" and {len(changed) - 8} more" if len(changed) > 8 else ""))


def process_fingerprint() -> tuple:
    """Process-wide state a candidate can change without replacing a guarded function, and that
    would change how the next job in the same worker behaves: dispatch and function mode stacks,
    kernels registered with torch.library (an ``aten::flip`` override), global module hooks, the
    ``torch`` entry of ``sys.modules``, the import hooks and the numeric settings
    (:func:`numeric_flags`). Compared before and after a job;
    a difference gets the next job a fresh worker (kernelsynth/workers.py). The kernels torch itself
    registers while importing torch._dynamo or torch._inductor are left out
    (``dynamo_deferral.TORCH_IMPORT_IMPLS``)."""
    import torch.library
    import torch.nn.modules.module as mm

    hooks = tuple(len(v) for k, v in sorted(vars(mm).items()) if k.startswith("_global_") and isinstance(v, dict))
    return (torch._C._len_torch_dispatch_stack(), torch._C._len_torch_function_stack(),
            len(set(getattr(torch.library, "_impls", ())) - dynamo_deferral.TORCH_IMPORT_IMPLS), hooks,
            id(sys.modules.get("torch")),
            tuple(id(f) for f in sys.meta_path), len(sys.modules.get("builtins").__dict__),
            tuple(sorted(numeric_flags().items())))


def thread_ids() -> frozenset:
    """Idents of every live Python thread (``sys._current_frames``: threads started with
    ``threading`` or ``_thread`` alike). Native threads a C extension starts are not seen."""
    return frozenset(sys._current_frames())


def check_no_new_threads(before: frozenset) -> None:
    """Raise VerificationFailure when a Python thread not in ``before`` is still alive: work the
    candidate left running could change its output after the checks, or hide work from the timer."""
    new = thread_ids() - before
    if new:
        names = {t.ident: t.name for t in threading.enumerate()}
        raise VerificationFailure(f"{len(new)} thread(s) started by the candidate still running after the call "
                                  f"({', '.join(sorted(names.get(i, str(i)) for i in new))}): background work "
                                  "is not allowed")


#: Dispatch keys whose kernels compute an operator's result (a registration there changes what the
#: reference computes); the lines of ``torch._C._dispatch_dump_table`` that :func:`dispatch_tables` keeps.
_COMPUTING_KEYS = ("CPU:", "CUDA:", "CompositeImplicitAutograd", "CompositeExplicitAutograd", "AutogradCPU:",
                   "AutogradCUDA:", "Python:")


#: The dispatcher's table dump, bound when this module is imported (before any candidate: a
#: replacement of ``torch._C._dispatch_dump_table`` does not answer :func:`check_dispatch`).
_DUMP_TABLE = torch._C._dispatch_dump_table


class DispatchTables(dict):
    """:func:`dispatch_tables`' ``{"aten::op": its computing kernels}``, plus :attr:`raw`: each
    operator's whole dump as read, which :func:`check_dispatch` compares first (a string equality
    per operator instead of filtering every dump again)."""

    raw: Dict[str, str]


def dispatch_tables(ops) -> Dict[str, str]:
    """``{"aten::op": its computing kernels}`` for the operator names ``ops`` (``flip``,
    ``aten::flip``, ``flip.default``): the lines of ``torch._C._dispatch_dump_table`` for the
    :data:`_COMPUTING_KEYS`, each naming where its kernel was registered. Names that are no
    operator are left out. Taken before the candidate is imported. A :class:`DispatchTables`
    (the whole dumps in :attr:`~DispatchTables.raw`)."""
    out = DispatchTables()
    out.raw = {}
    for name in ops or ():
        qual = name if "::" in name else f"aten::{str(name).split('.')[0]}"
        try:
            table = _DUMP_TABLE(qual)
        except Exception:  # noqa: BLE001 - not an operator
            continue
        out.raw[qual] = table
        out[qual] = "\n".join(line for line in table.splitlines() if line.startswith(_COMPUTING_KEYS))
    return out


def _raw_unchanged(raw: Dict[str, str]) -> bool:
    """Whether every operator's whole dump is still the string it was (then so are its computing
    kernels' lines, which are taken from it)."""
    try:
        return all(_DUMP_TABLE(qual) == table for qual, table in raw.items())
    except Exception:  # noqa: BLE001 - an operator gone: the full comparison names it
        return False


def check_dispatch(before: Dict[str, str]) -> None:
    """Raise TamperingError when a kernel of an operator of ``before`` (:func:`dispatch_tables`) was
    registered or replaced since: a ``torch.library`` override of ``aten::flip`` changes the
    reference the worker compares with (tests/adversarial/redteam_s11 ft1: its override returned
    the candidate's stale answers, so the staleness check agreed with them)."""
    raw = getattr(before, "raw", None)
    if raw is not None and raw.keys() == before.keys() and _raw_unchanged(raw):
        return  # every dump as it was: no computing kernel registered or replaced
    now = dispatch_tables(before)
    changed = sorted(k for k, v in before.items() if now.get(k) != v)
    if changed:
        raise TamperingError(f"the candidate registered a kernel for {', '.join(changed[:5])} (a dispatcher "
                             "registration changes what the reference computes)")
