"""The verification protocol (references/VERIFICATION.md lists every rule). Runs in a worker.

For every shape and trial: fresh seeded inputs; allocator and every uninitialised allocation
poisoned; the candidate runs first, the reference afterwards on clones of the untouched inputs;
then every element is compared (bitwise for ``exact``, ``|out - ref| <= atol + rtol * |ref|``
against a float64 reference for ``allclose``). Also checked: exact type ``torch.Tensor``, dtype,
shape, strides and device; inputs bitwise unchanged; the output shares no storage with an input;
NaN/Inf only where the reference has them; two calls on the same input agree (bitwise, or within
the spec's declared determinism bound); no thread the candidate started is still running after a
call; every retained output still matches after a pause at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

#: aten operators that return uninitialised memory. Every route to them -- ``torch.empty*``,
#: ``Tensor.new_empty``, the legacy ``torch.Tensor(3, 4)`` / ``x.new(3, 4)`` / ``torch.FloatTensor``
#: constructors -- passes the dispatcher, where :class:`PoisonEmpty` sees it.
_EMPTY_OPS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}


class VerificationFailure(Exception):
    """A candidate's output is wrong; the message says where and how."""


class TamperingError(Exception):
    """The candidate replaced a function of torch, triton or the harness (checked by identity).
    The worker that ran it is not reused."""


#: Namespaces whose callables a candidate must not replace: the reference and the harness use them.
#: ``torch.cuda.Event`` is a class: its methods (``elapsed_time``, ``record``) are what do_bench's
#: timer calls. ``time`` serves the host-synced timing; ``os``/``posix``/``signal`` hold the signal
#: guard of :mod:`kernelsynth.sandbox`.
GUARDED = ("torch", "torch.nn.functional", "torch.Tensor", "torch._C.TensorBase", "torch.nn.Module", "torch.cuda",
           "torch.cuda.Event",
           "torch.testing",
           "triton.testing", "kernelsynth.verify", "kernelsynth.timing", "kernelsynth.jobs", "kernelsynth.sandbox",
           "builtins", "time", "os", "posix", "signal")


def _namespace(name: str):
    import importlib

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


def integrity_snapshot() -> Dict[str, int]:
    """``{"module.attr": id(value)}`` for every callable or module in the :data:`GUARDED`
    namespaces and those given to :func:`guard_also`."""
    snap = {}
    for name in GUARDED + tuple(_EXTRA_GUARDED):
        ns = _namespace(name)
        if ns is None:
            continue
        for attr, val in list(vars(ns).items()):
            if callable(val) or inspect.ismodule(val):  # flags and counters may change legitimately
                snap[f"{name}.{attr}"] = id(val)
    return snap


#: Guarded classes: there, an attribute that appears is as bad as one that is replaced.
_CLASS_NAMESPACES = ("torch.Tensor", "torch._C.TensorBase", "torch.nn.Module", "torch.cuda.Event")


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


def check_integrity(before: Dict[str, int]) -> None:
    """Raise TamperingError naming what changed since ``before`` (replaced or deleted attributes)."""
    now = integrity_snapshot()
    changed = sorted(k for k, v in before.items() if now.get(k) != v and not _dynamo_generation_tag(k, v))
    # a NEW method on a guarded class shadows the base class's (Tensor.any over TensorBase.any)
    changed += sorted(k for k in set(now) - set(before) if k.rsplit(".", 1)[0] in _CLASS_NAMESPACES)
    if changed:
        raise TamperingError(f"the candidate replaced {', '.join(changed[:8])}"
                             + (f" and {len(changed) - 8} more" if len(changed) > 8 else ""))


def poison_value(dtype: torch.dtype):
    """The sentinel written into memory the candidate allocates: NaN for floats, a rare int."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).min + 7


class PoisonEmpty(TorchDispatchMode):
    """Fill every tensor made by an allocation that returns uninitialised memory (:data:`_EMPTY_OPS`:
    ``torch.empty*``, ``new_empty``, the legacy ``torch.Tensor(m, n)``/``x.new(m, n)``
    constructors) and the grown part of a ``resize_`` with :func:`poison_value`, so an element
    the kernel never writes cannot look right (on the CPU, freed memory is often handed back
    with the previous answer still in it)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        before = args[0].numel() if name == "resize_" and isinstance(args[0], torch.Tensor) else None
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.numel():
            if name in _EMPTY_OPS:
                out.fill_(poison_value(out.dtype))
            elif before is not None and out.numel() > before and out.is_contiguous():
                out.view(-1)[before:].fill_(poison_value(out.dtype))
        return out


class RecordAtenOps(TorchDispatchMode):
    """Collect the names of the aten operators a call dispatches (``flip``, ``empty_like``, ...).
    Every route to an operator -- ``torch.flip``, ``Tensor.flip``, ``torch.ops.aten.flip`` --
    passes through the dispatcher; a Triton or CUDA kernel launch does not."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def aten_ops_of(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device) -> List[str]:
    """The sorted aten operator names one call of ``candidate`` dispatches."""
    rec = RecordAtenOps()
    with torch.no_grad(), rec:
        candidate(*inputs)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return sorted(rec.ops)


def poison_allocator(nbytes: int, device: torch.device) -> None:
    """Fill ``nbytes`` of the CUDA caching allocator's free memory with 0xFF (NaN in every float
    dtype) and release it, so recycled blocks hold garbage rather than an earlier answer."""
    if device.type != "cuda" or nbytes <= 0:
        return
    block = torch.empty(int(nbytes), dtype=torch.uint8, device=device)
    block.fill_(0xFF)
    del block


def trial_seed(seed: int, *parts) -> int:
    """A 63-bit seed derived from the run seed and the trial's coordinates (stable across runs)."""
    digest = hashlib.sha256(repr((seed,) + parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclass
class VerificationReport:
    trials: int = 0
    shapes: List[str] = field(default_factory=list)
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0


def _bits(t: torch.Tensor) -> torch.Tensor:
    """A view of ``t``'s bits as integers, so NaN payloads and -0.0 compare exactly."""
    if t.dtype.is_floating_point:
        return t.view({8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.int8}[t.element_size()])
    return t


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True if the byte ranges of the two tensors' storages overlap."""
    if a.device != b.device or a.numel() == 0 or b.numel() == 0:
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    a0, b0 = sa.data_ptr(), sb.data_ptr()
    return a0 < b0 + sb.nbytes() and b0 < a0 + sa.nbytes()


def describe_mismatch(out: torch.Tensor, ref: torch.Tensor, bad: torch.Tensor) -> str:
    n_bad = int(bad.sum())
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return (f"{n_bad} of {bad.numel()} elements differ; first at {idx}: "
            f"got {out[idx].item()!r}, expected {ref[idx].item()!r}")


def layout_mismatch(out: torch.Tensor, ref: torch.Tensor) -> Optional[str]:
    """Why ``out``'s memory layout is not the reference's, or None.

    A contiguous reference output requires a contiguous output; otherwise the strides must be
    the reference's. Dimensions of size 1 are ignored (their stride is never used). A
    column-major or strided output with the right values breaks every caller that reads the
    storage (``.data_ptr()``, a next kernel, ``.view``), so it is a wrong output.
    """
    if ref.is_contiguous():
        if out.is_contiguous():
            return None
        return (f"output strides {tuple(out.stride())} are not contiguous; the reference's are "
                f"{tuple(ref.stride())} (layout rule)")
    same = all(so == sr for so, sr, n in zip(out.stride(), ref.stride(), ref.shape) if n > 1)
    return None if same else (f"output strides {tuple(out.stride())}, expected the reference's "
                              f"{tuple(ref.stride())} (layout rule)")


def compare(out, ref: torch.Tensor, comparison: str, tol: Optional[Dict[str, float]]) -> Dict[str, float]:
    """Compare one output with the reference output. Returns ``{"max_abs_err", "max_rel_err"}``
    (floats; ``max_rel_err`` is the largest absolute error over the largest finite ``|ref|``).

    ``out``: whatever the candidate returned. ``ref``: the reference output, in the output dtype
    (``exact``) or in float64 (``allclose``). ``tol``: ``{"atol", "rtol"}`` (``allclose`` only).
    Checks, in order: exact type ``torch.Tensor``, shape, dtype (``exact``), device type,
    layout (:func:`layout_mismatch`), then the values. Raises VerificationFailure with the reason.
    """
    if type(out) is not torch.Tensor:
        raise VerificationFailure(f"output is {type(out).__module__}.{type(out).__qualname__}, "
                                  "expected exactly torch.Tensor")
    if out.shape != ref.shape:
        raise VerificationFailure(f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
    expected_dtype = ref.dtype if comparison == "exact" else out.dtype
    if comparison == "exact" and out.dtype != expected_dtype:
        raise VerificationFailure(f"output dtype {out.dtype}, expected {expected_dtype}")
    if out.device.type != ref.device.type:
        raise VerificationFailure(f"output on {out.device}, expected {ref.device}")
    layout = layout_mismatch(out, ref)
    if layout:
        raise VerificationFailure(layout)
    if comparison == "exact":
        bad = _bits(out.contiguous()) != _bits(ref.contiguous())
        if bool(bad.any()):
            raise VerificationFailure("not bit-exact: " + describe_mismatch(out, ref, bad))
        return {"max_abs_err": 0.0, "max_rel_err": 0.0}
    o, r = out.double(), ref.double()
    nan_o, nan_r = torch.isnan(o), torch.isnan(r)
    if bool((nan_o != nan_r).any()):
        raise VerificationFailure("NaN where the reference has none (or the reverse): "
                                  + describe_mismatch(o, r, nan_o != nan_r))
    inf_bad = torch.isinf(o) != torch.isinf(r)
    if bool(inf_bad.any()):
        raise VerificationFailure("Inf where the reference has none (or the reverse): " + describe_mismatch(o, r, inf_bad))
    finite = torch.isfinite(r)
    o, r = torch.where(finite, o, 0.0), torch.where(finite, r, 0.0)
    err = (o - r).abs()
    bad = err > tol["atol"] + tol["rtol"] * r.abs()
    if bool(bad.any()):
        raise VerificationFailure(f"outside atol={tol['atol']}, rtol={tol['rtol']}: " + describe_mismatch(o, r, bad))
    scale = float(r.abs().max()) if r.numel() else 0.0
    max_abs = float(err.max()) if err.numel() else 0.0
    return {"max_abs_err": max_abs, "max_rel_err": max_abs / scale if scale > 0 else max_abs}


def run_reference(ref_model: torch.nn.Module, inputs: Sequence[torch.Tensor], comparison: str,
                  dtype: torch.dtype) -> torch.Tensor:
    """The reference output on clones of ``inputs``: in the inputs' dtype for ``exact``, in float64
    (floats upcast) for ``allclose``."""
    with torch.no_grad():
        if comparison == "allclose":
            args = [x.double() if x.is_floating_point() else x.clone() for x in inputs]
            return ref_model.double()(*args)
        return ref_model(*[x.clone() for x in inputs])


def verify(candidate: Callable, ref_model: torch.nn.Module, get_inputs: Callable,
           shapes: Sequence[Dict[str, int]], dtype: torch.dtype, device: torch.device, *, trials: int,
           seed: int, comparison: str, tol: Optional[Dict[str, float]], determinism: bool = True,
           poison_empty: bool = True, special_values: bool = False,
           guard: Optional[Dict[str, int]] = None, determinism_tol: Optional[Dict[str, float]] = None,
           threads_before: Optional[frozenset] = None, check_threads: bool = True,
           settle_s: float = 0.05, models_for: Optional[Callable] = None,
           audit: Optional[Dict[str, Any]] = None, group: str = "listed") -> VerificationReport:
    """Run the protocol on every shape x trial. Raises VerificationFailure at the first failure,
    with the shape and trial named; returns the report when everything passed.

    ``shapes``: dicts of named dims, passed to ``get_inputs(shape, dtype, device, generator)``.
    ``special_values``: trial 1 of each shape gets NaN, +-Inf, -0.0 and huge values (floats) or
    the dtype's extremes (ints) planted in its inputs. ``guard``: an :func:`integrity_snapshot`
    taken before the candidate was imported, checked after every trial (TamperingError).
    ``determinism``: check repeat calls on the first trial of each shape; they must agree bitwise,
    or within ``determinism_tol`` (``{"atol", "rtol"}``, declared by the spec for atomics).
    ``threads_before``: :func:`thread_ids` taken before the candidate was imported (default: at
    the start of this call); with ``check_threads`` (off for trusted baselines: torch.compile
    keeps worker threads), a thread not in it that is alive after a call fails the candidate.
    ``settle_s``: the pause before the last trial of every shape is compared again (work that
    lands after the checks).
    ``models_for(shape) -> (candidate, ref_model)``: models built for each shape (tasks whose
    parameters depend on the shape); replaces ``candidate`` and ``ref_model`` when given.
    ``audit``: a dict that receives ``{"<group>:<shape index>": digest(output)}`` for the last
    trial of every shape, taken right after the call; the parent compares these with references
    computed in a process that never imported the candidate (:mod:`kernelsynth.audit`)."""
    report = VerificationReport()
    if check_threads and threads_before is None:
        threads_before = thread_ids()
    elif not check_threads:
        threads_before = None
    retained = []  # (where, output, reference) of each shape's last trial, compared again at the end
    for si, shape in enumerate(shapes):
        if models_for is not None:
            candidate, ref_model = models_for(shape)
        label = shape_label(shape)
        report.shapes.append(label)
        earlier = None  # (output, snapshot of its bits) of this shape's previous trial
        for t in range(trials):
            inputs, gen = trial_inputs(get_inputs, shape, si, t, seed, dtype, device, special_values)
            pristine = [x.clone() for x in inputs]
            where = f"shape {label}, trial {t}"
            try:
                out = call_poisoned(candidate, inputs, device, poison_empty, threads_before)
                if audit is not None:  # every trial, for the independent check (kernelsynth/audit.py)
                    audit[f"{group}:{si}:{t}"] = digest(out, comparison)
                check_earlier_output(earlier, out)
                check_inputs_untouched(inputs, pristine, out)
                ref = run_reference(ref_model, pristine, comparison, dtype)
                errs = compare(out, ref, comparison, tol)
                if determinism and t == 0:
                    latest = check_repeat_and_fresh(candidate, ref_model, get_inputs, shape, pristine, out, ref,
                                                    comparison, tol, dtype, device, gen, poison_empty, determinism_tol,
                                                    threads_before)
                else:
                    latest = out
                if t == trials - 1:
                    retained.append((where, out, ref))
                elif type(latest) is torch.Tensor:
                    earlier = (latest, latest.detach().clone())
            except VerificationFailure as e:
                raise VerificationFailure(f"{where}: {e}") from None
            if guard is not None:
                check_integrity(guard)
            report.trials += 1
            report.max_abs_err = max(report.max_abs_err, errs["max_abs_err"])
            report.max_rel_err = max(report.max_rel_err, errs["max_rel_err"])
    recheck_after_settling(retained, comparison, tol, device, threads_before, settle_s)
    return report


def check_earlier_output(earlier, out) -> None:
    """Raise VerificationFailure when an earlier call's output (``earlier``: the tensor and a
    snapshot of its bits) changed or shares storage with ``out``: an output buffer reused across calls."""
    if earlier is None:
        return
    prev, snapshot = earlier
    if (type(out) is torch.Tensor and shares_storage(out, prev)) or \
            not bool(torch._C.TensorBase.all(_bits(prev.contiguous()) == _bits(snapshot.contiguous()))):
        raise VerificationFailure("an earlier output changed or shares storage with a later one (one output "
                                  "buffer reused across calls): outputs must be fresh tensors")


def recheck_after_settling(retained, comparison, tol, device, threads_before, settle_s) -> None:
    """Pause ``settle_s``, synchronise, and compare every retained output with its reference again:
    an output changed by work that landed after its checks (a thread, a stream, a delayed copy)
    fails. Also fails when a thread the candidate started is still alive."""
    if not retained:
        return
    time.sleep(settle_s)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    if threads_before is not None:
        check_no_new_threads(threads_before)
    for where, out, ref in retained:
        try:
            compare(out, ref, comparison, tol)
        except VerificationFailure as e:
            raise VerificationFailure(f"{where}: the output changed after it was checked (work that lands "
                                      f"after the call returned): {e}") from None


def process_fingerprint() -> tuple:
    """Process-wide state a candidate can change without replacing a guarded function, and that
    would change how the next job in the same worker behaves: dispatch and function mode stacks,
    kernels registered with torch.library (an ``aten::flip`` override), global module hooks, the
    ``torch`` entry of ``sys.modules`` and the import hooks. Compared before and after a job;
    a difference gets the next job a fresh worker (kernelsynth/workers.py)."""
    import torch.library
    import torch.nn.modules.module as mm

    hooks = tuple(len(v) for k, v in sorted(vars(mm).items()) if k.startswith("_global_") and isinstance(v, dict))
    return (torch._C._len_torch_dispatch_stack(), torch._C._len_torch_function_stack(),
            len(getattr(torch.library, "_impls", ())), hooks, id(sys.modules.get("torch")),
            tuple(id(f) for f in sys.meta_path), len(sys.modules.get("builtins").__dict__))


def thread_ids() -> frozenset:
    """Idents of every live Python thread (``sys._current_frames``: threads started with
    ``threading`` or ``_thread`` alike). Native threads a C extension starts are not seen."""
    return frozenset(sys._current_frames())


def check_no_new_threads(before: frozenset) -> None:
    """Raise VerificationFailure when a Python thread not in ``before`` is still alive: work the
    candidate left running could change its output after the checks, or hide work from the timer."""
    import threading

    new = thread_ids() - before
    if new:
        names = {t.ident: t.name for t in threading.enumerate()}
        raise VerificationFailure(f"{len(new)} thread(s) started by the candidate still running after the call "
                                  f"({', '.join(sorted(names.get(i, str(i)) for i in new))}): background work "
                                  "is not allowed")


def outputs_agree(a: torch.Tensor, b: torch.Tensor, bound: Optional[Dict[str, float]]) -> bool:
    """True if two outputs of the same input agree: same type, shape and bits (``bound`` None), or
    NaN/Inf at the same places and ``|a - b| <= atol + rtol * |b|`` elsewhere (``bound`` given)."""
    if type(a) is not torch.Tensor or a.shape != b.shape or a.dtype != b.dtype:
        return False
    if bound is None or not a.dtype.is_floating_point:
        return bool((_bits(a.contiguous()) == _bits(b.contiguous())).all())
    x, y = a.double(), b.double()
    inf = torch.isinf(y)
    if bool((torch.isnan(x) != torch.isnan(y)).any()) or bool((torch.isinf(x) != inf).any()) \
            or bool((x[inf] != y[inf]).any()):  # Inf of the same sign
        return False
    fin = torch.isfinite(y)
    x, y = torch.where(fin, x, 0.0), torch.where(fin, y, 0.0)
    return bool(((x - y).abs() <= bound["atol"] + bound["rtol"] * y.abs()).all())


def check_repeat_and_fresh(candidate, ref_model, get_inputs, shape, pristine, out, ref, comparison, tol, dtype,
                           device, gen, poison_empty, determinism_tol=None, threads_before=None) -> None:
    """Determinism and staleness on one shape. Returns the last output it got (the next trial's
    output must not share its storage or change it: :func:`check_earlier_output`).

    1. A second call on a copy of the same input must give the bits of the first output (a
       snapshot of it, so a candidate that reuses one output buffer cannot agree with itself),
       or agree within ``determinism_tol`` when the spec declares one, and must still match the
       reference.
    2. The same input tensor, overwritten in place with fresh values, called again: the output
       must follow (no answers cached per tensor object or data pointer).
    """
    first = out.detach().clone()
    again = call_poisoned(candidate, [x.clone() for x in pristine], device, poison_empty, threads_before)
    if not outputs_agree(again, first, determinism_tol):
        bound = "bitwise" if determinism_tol is None else \
            f"within atol={determinism_tol['atol']}, rtol={determinism_tol['rtol']}"
        raise VerificationFailure(f"not deterministic ({bound}): a second call on the same input gave a "
                                  "different output")
    compare(again, ref, comparison, tol)
    if not bool((_bits(out.contiguous()) == _bits(first.contiguous())).all()):
        raise VerificationFailure("the first output changed after it was returned (a later call or "
                                  "background work wrote into it)")
    inputs = [x.clone() for x in pristine]
    call_poisoned(candidate, inputs, device, poison_empty, threads_before)
    fresh = list(get_inputs(shape, dtype, device, gen))
    for x, f in zip(inputs, fresh):
        if isinstance(x, torch.Tensor):
            x.copy_(f)
    refreshed = [x.clone() for x in inputs]
    out2 = call_poisoned(candidate, inputs, device, poison_empty, threads_before)
    try:
        compare(out2, run_reference(ref_model, refreshed, comparison, dtype), comparison, tol)
    except VerificationFailure as e:
        raise VerificationFailure(f"stale answer: after the input was overwritten in place, {e}") from None
    check_earlier_output((out, first), out2)
    return out2


def shape_label(shape: Dict[str, int]) -> str:
    """``{"M": 3, "N": 5}`` -> ``"3x5"``, as reasons name shapes."""
    return "x".join(str(v) for v in shape.values())


def trial_inputs(get_inputs: Callable, shape: Dict[str, int], si: int, t: int, seed: int, dtype: torch.dtype,
                 device: torch.device, special_values: bool):
    """The inputs of trial ``t`` of shape number ``si`` and the generator that made them (it goes
    on to draw the staleness check's fresh values). Deterministic: the independent reference
    process (:func:`kernelsynth.jobs.oracle`) rebuilds the same inputs bit for bit."""
    label = shape_label(shape)
    gen = torch.Generator(device=device).manual_seed(trial_seed(seed, si, t, label))
    inputs = list(get_inputs(shape, dtype, device, gen))
    if special_values and t == 1:
        inputs = [plant_special_values(x, gen) for x in inputs]
    return inputs, gen


#: Outputs up to this many bytes travel to the parent whole; larger ones as a checksum (exact only).
DIGEST_MAX_BYTES = 256 * 2**20
_PRIME = 2147483647  # 2^31 - 1


def _checksum(t: torch.Tensor) -> List[int]:
    """Two position-weighted sums of the bits of ``t`` modulo 2^31-1 (weights from a
    multiplicative hash of the flat index): equal for identical bits, equal for different bits
    with probability about 2^-62. Chunked, so the temporaries stay small."""
    flat = _bits(t.contiguous()).reshape(-1)
    sums = [0, 0]
    step = 1 << 24
    for start in range(0, flat.numel(), step):
        x = torch.remainder(flat[start:start + step].to(torch.int64), _PRIME)
        idx = torch.arange(start, start + x.numel(), device=x.device, dtype=torch.int64)
        for k, mult in enumerate((2654435761, 40503)):
            w = torch.remainder(idx * mult + k + 1, _PRIME) + 1
            sums[k] = (sums[k] + int(torch.remainder(x * w, _PRIME).sum())) % _PRIME
    return sums


def digest(out, comparison: str) -> Dict[str, Any]:
    """What the independent check needs of one output, on the host: ``{"type": name}`` when it
    is not exactly a torch.Tensor; else shape and dtype, and the tensor's bytes (C order, read back
    with :func:`tensor_of`) or, for ``exact`` outputs above :data:`DIGEST_MAX_BYTES`, :func:`_checksum`."""
    if type(out) is not torch.Tensor:
        return {"type": f"{type(out).__module__}.{type(out).__qualname__}"}
    d: Dict[str, Any] = {"type": "torch.Tensor", "shape": list(out.shape), "dtype": str(out.dtype)}
    if comparison == "exact" and out.numel() * out.element_size() > DIGEST_MAX_BYTES:
        d["checksum"] = _checksum(out.detach())
    else:  # raw bytes, not a tensor: torch's pickling of CPU tensors between processes goes through
        # shared memory that dies with the sending worker (which may exit right after sending)
        d["bytes"] = out.detach().to("cpu", copy=True).contiguous().view(-1).view(torch.uint8).numpy().tobytes()
    return d


def tensor_of(d: Dict[str, Any]) -> torch.Tensor:
    """The CPU tensor a :func:`digest` carries as ``bytes``."""
    dtype = getattr(torch, d["dtype"].removeprefix("torch."))
    flat = torch.frombuffer(bytearray(d["bytes"]), dtype=torch.uint8) if d["bytes"] else torch.empty(0, dtype=torch.uint8)
    return flat.view(dtype).reshape(d["shape"])


def plant_special_values(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A copy of ``x`` with edge values at random positions: NaN, +Inf, -Inf, -0.0, +-6e4 (within
    float16's range) for floats; the dtype's min and max for ints. Covers distribution cheats
    (code that is only right for randn-like data)."""
    if not isinstance(x, torch.Tensor) or x.numel() == 0 or x.dtype == torch.bool:
        return x
    y = x.clone()
    flat = y.view(-1)
    if y.dtype.is_floating_point:
        tiny = torch.finfo(y.dtype).tiny
        specials = [float("nan"), float("inf"), float("-inf"), -0.0, 6e4, -6e4, tiny / 4, -tiny / 2]
    else:
        info = torch.iinfo(y.dtype)
        specials = [info.min, info.max, 0, -1 if info.min < 0 else 1]
    n = min(flat.numel(), max(len(specials), flat.numel() // 16))
    # distinct positions: with repeated ones, which value lands is unspecified on CUDA, and the
    # independent check's process must rebuild these inputs bit for bit
    idx = torch.randperm(flat.numel(), generator=gen, device=y.device)[:n]
    vals = torch.tensor(specials, dtype=y.dtype, device=y.device).repeat(n // len(specials) + 1)[:n]
    flat[idx] = vals
    if y.dtype.is_floating_point and n > 1:  # a negative NaN with payload 1: its bits must survive too
        nan_bits = _bits(torch.full((1,), float("nan"), dtype=y.dtype, device=y.device))
        sign = torch.iinfo(nan_bits.dtype).min
        flat[idx[1:2]] = (nan_bits | sign | 1).view(y.dtype)
    return y


def call_poisoned(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device,
                  poison_empty: bool = True, threads_before: Optional[frozenset] = None):
    """Call the candidate with allocator poisoning and (``poison_empty``) :class:`PoisonEmpty`;
    synchronises the device. Baselines run without the mode (torch.compile traces it).
    With ``threads_before``, a thread started by the candidate and still alive fails it
    (:func:`check_no_new_threads`)."""
    nbytes = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
    poison_allocator(2 * nbytes, device)
    with torch.no_grad(), (PoisonEmpty() if poison_empty else contextlib.nullcontext()):
        out = candidate(*inputs)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    if threads_before is not None:
        check_no_new_threads(threads_before)
    return out


def check_inputs_untouched(inputs, pristine, out) -> None:
    """Inputs bitwise unchanged, and the output not aliasing any of them."""
    for i, (x, p) in enumerate(zip(inputs, pristine)):
        if not isinstance(x, torch.Tensor):
            continue
        if x.shape != p.shape or bool((_bits(x) != _bits(p)).any()):
            raise VerificationFailure(f"input {i} was modified by the candidate")
        if isinstance(out, torch.Tensor) and shares_storage(out, x):
            raise VerificationFailure(f"output shares storage with input {i}")
