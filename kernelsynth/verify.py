"""The verification protocol (references/EXPLORATION.md, "Verification"). Runs in a worker.

For every shape and trial: fresh seeded inputs; allocator and ``torch.empty*`` outputs poisoned;
the candidate runs first, the reference afterwards on clones of the untouched inputs; then every
element is compared (bitwise for ``exact``, ``|out - ref| <= atol + rtol * |ref|`` against a
float64 reference for ``allclose``). Also checked: exact type ``torch.Tensor``, dtype, shape and
device; inputs bitwise unchanged; the output shares no storage with an input; NaN/Inf only where
the reference has them; two calls on the same input agree bitwise (determinism).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

import torch
from torch.overrides import TorchFunctionMode

_EMPTY_FACTORIES = {torch.empty, torch.empty_like, torch.empty_strided, torch.Tensor.new_empty}


class VerificationFailure(Exception):
    """A candidate's output is wrong; the message says where and how."""


def poison_value(dtype: torch.dtype):
    """The sentinel written into memory the candidate allocates: NaN for floats, a rare int."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).min + 7


class PoisonEmpty(TorchFunctionMode):
    """Fill every tensor made by ``torch.empty``/``empty_like``/``empty_strided``/``new_empty``
    with :func:`poison_value`, so an element the kernel never writes cannot look right."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in _EMPTY_FACTORIES and isinstance(out, torch.Tensor) and out.numel():
            with torch.no_grad():
                out.fill_(poison_value(out.dtype))
        return out


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


def compare(out, ref: torch.Tensor, comparison: str, tol: Optional[Dict[str, float]]) -> Dict[str, float]:
    """Compare one output with the reference output. Returns ``{"max_abs_err", "max_rel_err"}``.

    ``ref`` is the reference evaluated in the output dtype (``exact``) or in float64
    (``allclose``). Raises VerificationFailure with the reason.
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
    if comparison == "allclose":
        args = [x.double() if x.is_floating_point() else x.clone() for x in inputs]
        return ref_model.double()(*args)
    return ref_model(*[x.clone() for x in inputs])


def verify(candidate: Callable, ref_model: torch.nn.Module, get_inputs: Callable,
           shapes: Sequence[Dict[str, int]], dtype: torch.dtype, device: torch.device, *, trials: int,
           seed: int, comparison: str, tol: Optional[Dict[str, float]], determinism: bool = True,
           poison_empty: bool = True) -> VerificationReport:
    """Run the protocol on every shape x trial. Raises VerificationFailure at the first failure,
    with the shape and trial named; returns the report when everything passed."""
    report = VerificationReport()
    for si, shape in enumerate(shapes):
        label = "x".join(str(v) for v in shape.values())
        report.shapes.append(label)
        for t in range(trials):
            gen = torch.Generator(device=device).manual_seed(trial_seed(seed, si, t, label))
            inputs = list(get_inputs(shape, dtype, device, gen))
            pristine = [x.clone() for x in inputs]
            where = f"shape {label}, trial {t}"
            try:
                out = call_poisoned(candidate, inputs, device, poison_empty)
                check_inputs_untouched(inputs, pristine, out)
                ref = run_reference(ref_model, pristine, comparison, dtype)
                errs = compare(out, ref, comparison, tol)
                if determinism and t == 0:
                    again = call_poisoned(candidate, [x.clone() for x in pristine], device, poison_empty)
                    if type(again) is not torch.Tensor or again.shape != out.shape or \
                            bool((_bits(again.contiguous()) != _bits(out.contiguous())).any()):
                        raise VerificationFailure("not deterministic: a second call on the same input "
                                                  "gave a different output")
            except VerificationFailure as e:
                raise VerificationFailure(f"{where}: {e}") from None
            report.trials += 1
            report.max_abs_err = max(report.max_abs_err, errs["max_abs_err"])
            report.max_rel_err = max(report.max_rel_err, errs["max_rel_err"])
    return report


def call_poisoned(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device,
                  poison_empty: bool = True):
    """Call the candidate with allocator poisoning and (``poison_empty``) ``torch.empty*``
    poisoning; synchronises the device. Baselines run without the mode (torch.compile traces it)."""
    nbytes = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
    poison_allocator(2 * nbytes, device)
    with torch.no_grad(), (PoisonEmpty() if poison_empty else contextlib.nullcontext()):
        out = candidate(*inputs)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
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
