"""The precision rule (VERIFICATION.md rule 23): the precision a candidate achieved, measured
against the precision policy its task declares, not only against a max-error bound.

The statistic. For an output element ``y = sum_k t_k`` (a dot product: ``t_k = w_k x_k``), an
implementation whose operands are rounded to a format with unit roundoff ``u`` makes an error of
about ``sum_k t_k (d_wk + d_xk)`` with ``|d| <= u``: a random walk of size ``sqrt(sum_k t_k^2) * u``
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., sec. 2.8 and 3.1; the
probabilistic model of rounding errors). So each element's error is divided by its **rounding
scale** ``s = sqrt(f(x^2, p^2))``: the reference run on the squared inputs and squared parameters
(exact ``sqrt(sum t_k^2)`` for linear and bilinear maps -- matmul, convolution, bias --; a
sensible magnitude for other maps). The statistic is the RMS over all finite elements of one
:func:`~kernelsynth.verify.protocol.verify` call (a shape group: listed, derived, timing), pooled
over its trials::

    rms = sqrt(mean_i ((out_i - ref64_i) / s_i)^2)

It does not grow with the reduction length, and it is about ``0.6 u`` for round-to-nearest
operands, ``1.9 u`` for truncated ones (measured, references/VERIFICATION.md).

The comparison. The same statistic is taken, on the same inputs, of honest computations at the
declared precision: (1) the reference at the job dtype on the device under test, with TF32 on
exactly when the policy is ``tf32``, and (2) a software emulation of the policy: operands (inputs
and parameters) truncated to the policy's mantissa (``tf32``: 10 bits, the less precise of the
two roundings hardware uses), the reference on them in float32 with TF32 off, the result rounded
to the job dtype. The candidate passes when ::

    rms <= MARGIN * max(honest rms) + ACCUMULATION

over at least :data:`MIN_ELEMENTS` elements per group (fewer: recorded, not judged).

``ACCUMULATION`` (2^-16) admits float32 accumulation in any order and split: Higham's
probabilistic bound ``sqrt(n) * u`` with ``n = 2^16`` terms and ``u = 2^-24``.

Policies (:data:`POLICIES`), by unit roundoff ``u`` of their operands: ``fp64`` 2^-53, ``fp32``
2^-24 (IEEE 754 binary64/binary32; Higham Table 2.1), ``tf32`` 2^-11 (8-bit exponent, 10-bit
mantissa: NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020), ``fp16`` 2^-11 (IEEE 754
binary16), ``bf16`` 2^-8 (8 significant bits: Intel BFLOAT16 Hardware Numerics Definition, 2018).
Every policy accumulates in at least float32 and rounds once to the output dtype.
"""

from __future__ import annotations

import contextlib
import copy
import math
import weakref
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from .failures import VerificationFailure

#: policy -> (unit roundoff of its operands, mantissa bits operands are truncated to in the
#: emulation; None: operands are used as they are in the job dtype).
POLICIES: Dict[str, Tuple[float, Optional[int]]] = {
    "fp64": (2.0 ** -53, None), "fp32": (2.0 ** -24, None), "tf32": (2.0 ** -11, 10),
    "fp16": (2.0 ** -11, None), "bf16": (2.0 ** -8, None),
}
#: The candidate's statistic may be this many times the honest computations' largest.
MARGIN = 1.4
#: Added to the bound: float32 accumulation in any order (sqrt(2^16) * 2^-24).
ACCUMULATION = 2.0 ** -16
#: A shape group with fewer measured elements is not judged (its statistic is recorded): an RMS
#: over a handful of elements says little about a rounding mode (a 2x2 image pools to 1 element).
MIN_ELEMENTS = 256


def truncate_mantissa(t: torch.Tensor, bits: int) -> torch.Tensor:
    """``t`` (floating) as float32 with its mantissa truncated to ``bits`` explicit bits (toward
    zero; NaN/Inf kept)."""
    x = t.float().contiguous()
    mask = ~((1 << (23 - bits)) - 1)
    y = (x.view(torch.int32) & mask).view(torch.float32)
    return torch.where(torch.isfinite(x), y, x)


@contextlib.contextmanager
def tf32(allowed: bool):
    """cuDNN and cuBLAS float32 paths with TF32 ``allowed`` (restored afterwards)."""
    cudnn, matmul = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul


def _mapped(model: torch.nn.Module, dtype: torch.dtype, fn=None) -> torch.nn.Module:
    """A copy of ``model`` in ``dtype`` (floating parameters and buffers), with ``fn`` applied
    to each of them."""
    m = copy.deepcopy(model).to(dtype)
    if fn is not None:
        with torch.no_grad():
            for t in list(m.parameters()) + list(m.buffers()):
                if t.is_floating_point():
                    t.copy_(fn(t))
    return m.eval()


def _inputs(inputs: Sequence, dtype: Optional[torch.dtype], fn=None) -> list:
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            y = fn(x) if fn is not None else x.clone()
            out.append(y.to(dtype) if dtype is not None else y)
        else:
            out.append(x.clone() if isinstance(x, torch.Tensor) else x)
    return out


class HonestReferences:
    """What the precision rule needs of the reference for one trial, by :meth:`terms`: the
    reference at the job dtype (its output dtype is the expected dtype, rule 3), the rounding scale
    and the honest outputs. Keeps per reference model the copies it derives (job dtype, float32
    squared, float32 emulated), so a model that :func:`~kernelsynth.verify.comparison.run_reference`
    has turned float64 still gives the job-dtype reference (its parameters were in the job dtype:
    the round trip is exact)."""

    def __init__(self, policy: Optional[str], dtype: torch.dtype):
        if policy is not None and policy not in POLICIES:
            raise ValueError(f"unknown precision policy {policy!r}; one of {sorted(POLICIES)}")
        self.policy, self.dtype = policy, dtype
        self._models: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    def _copies(self, ref_model):
        if ref_model not in self._models:
            bits = POLICIES[self.policy][1] if self.policy else None
            self._models[ref_model] = (
                _mapped(ref_model, self.dtype),
                _mapped(ref_model, torch.float32, lambda p: p.float() * p.float()) if self.policy else None,
                _mapped(ref_model, torch.float32, lambda p: truncate_mantissa(p, bits)) if bits else None)
        return self._models[ref_model]

    def at_dtype(self, ref_model, inputs) -> torch.Tensor:
        """The reference at the job dtype on clones of ``inputs`` (TF32 on for a ``tf32`` policy)."""
        lo = self._copies(ref_model)[0]
        with torch.no_grad(), tf32(self.policy == "tf32"):
            return lo(*_inputs(inputs, None))

    def terms(self, ref_model, inputs, ref64: torch.Tensor) -> Dict[str, object]:
        """``{"dtype", "scale", "honest"}`` for one trial: the reference's output dtype at the job
        dtype, the rounding scale ``sqrt(f(x^2, p^2))`` (float32) and the honest outputs (device
        reference at the job dtype; the emulated policy, rounded to the job dtype). ``scale`` and
        ``honest`` are None without a policy or for a non-floating output."""
        lo = self.at_dtype(ref_model, inputs)
        out: Dict[str, object] = {"dtype": lo.dtype if isinstance(lo, torch.Tensor) else None,
                                  "scale": None, "honest": []}
        if not self.policy or not isinstance(lo, torch.Tensor) or not lo.is_floating_point():
            return out
        _, sq, emu = self._copies(ref_model)
        with torch.no_grad(), tf32(False):
            out["scale"] = sq(*_inputs(inputs, torch.float32, lambda x: x.float() * x.float())).abs().sqrt()
            emulated = ref64 if emu is None else \
                emu(*_inputs(inputs, torch.float32, lambda x: truncate_mantissa(x, POLICIES[self.policy][1])))
        out["honest"] = [lo, emulated.to(lo.dtype)]
        return out


def sq_error_sum(out: torch.Tensor, ref64: torch.Tensor, scale: torch.Tensor) -> Tuple[float, int]:
    """``(sum_i ((out_i - ref_i) / s_i)^2, count)`` over the elements where the reference and
    the output are finite and the scale is above 2^-30 of its largest value (smaller ones are
    left to the absolute tolerance). Computed on ``ref64``'s device (a GPU in a worker: the timing
    shape's outputs have millions of elements)."""
    dev = ref64.device
    o, r, s = out.detach().to(dev, torch.float64), ref64.detach().double(), scale.detach().to(dev, torch.float64)
    if o.shape != r.shape or s.shape != r.shape or r.numel() == 0:
        return 0.0, 0
    finite_s = torch.isfinite(s)
    smax = torch.where(finite_s, s, torch.zeros((), dtype=s.dtype, device=dev)).amax()
    keep = torch.isfinite(r) & torch.isfinite(o) & finite_s & (s > smax * 2.0 ** -30) & (s > 0)
    e = torch.where(keep, (o - r) / torch.where(keep, s, torch.ones((), dtype=s.dtype, device=dev)),
                    torch.zeros((), dtype=s.dtype, device=dev))
    total, count = torch.stack([(e * e).sum(), keep.sum().to(s.dtype)]).tolist()  # one device sync
    return float(total), int(count)


@dataclass
class PrecisionMeter:
    """Pools the precision statistic of the candidate and of the honest computations over the
    trials of one shape group, and applies the rule (:meth:`check`)."""

    policy: Optional[str]
    candidate: List[float] = field(default_factory=lambda: [0.0, 0])
    honest: List[List[float]] = field(default_factory=list)

    def add_sums(self, candidate: Tuple[float, int], honest: Sequence[Tuple[float, int]]) -> None:
        self.candidate[0] += candidate[0]
        self.candidate[1] += candidate[1]
        for i, (s, n) in enumerate(honest):
            if i == len(self.honest):
                self.honest.append([0.0, 0])
            self.honest[i][0] += s
            self.honest[i][1] += n

    def add(self, out: torch.Tensor, ref64: torch.Tensor, terms: Dict[str, object]) -> None:
        """One trial: the candidate's ``out`` and the honest outputs of ``terms`` (from
        :meth:`HonestReferences.terms`) against the float64 reference."""
        if terms.get("scale") is None:
            return
        self.add_sums(sq_error_sum(out, ref64, terms["scale"]),
                      [sq_error_sum(h, ref64, terms["scale"]) for h in terms["honest"]])

    def stats(self) -> Dict[str, Optional[float]]:
        """``{"rms", "honest_rms", "bound"}`` (None when nothing was measured)."""
        if not self.policy or self.candidate[1] == 0:
            return {"rms": None, "honest_rms": None, "bound": None}
        rms = math.sqrt(self.candidate[0] / self.candidate[1])
        honest = max((math.sqrt(s / n) for s, n in self.honest if n), default=0.0)
        return {"rms": rms, "honest_rms": honest, "bound": MARGIN * honest + ACCUMULATION}

    def check(self, where: str) -> Dict[str, Optional[float]]:
        """:meth:`stats`; raises VerificationFailure naming ``where`` when the rule fails."""
        st = self.stats()
        if st["rms"] is not None and self.candidate[1] >= MIN_ELEMENTS and not st["rms"] <= st["bound"]:
            raise VerificationFailure(
                f"{where}: precision below the declared policy {self.policy}: RMS error over the rounding scale "
                f"{st['rms']:.3e} > {st['bound']:.3e} ({MARGIN} x {st['honest_rms']:.3e}, the honest computation "
                f"at {self.policy} on the same inputs, + {ACCUMULATION:.2e}) (precision rule)")
        return st
