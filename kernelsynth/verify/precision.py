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

    rms <= MARGIN * HEADROOM * max(honest rms) + ACCUMULATION

(:data:`HEADROOM`: 8 for ``fp32``, whose kernels may use the GPU's approximate exp and division;
1 for the other policies) over at least :data:`MIN_ELEMENTS` elements per group; the groups with fewer are pooled into
one, judged from :data:`POOLED_MIN_ELEMENTS` (:meth:`PrecisionMeter.pooled`: a scalar output).

``ACCUMULATION`` is the **accumulation slack** of the shape group, :func:`accumulation_slack`:
``sqrt(n) * u_acc``, Higham's probabilistic bound for a sum of ``n`` terms in any order (*Accuracy
and Stability of Numerical Algorithms*, 2nd ed., sec. 2.8 and 4.2: recursive summation errs by
``sum_k |s_k| d_k`` with ``|d_k| <= u``, a random walk of size ``sqrt(n) u`` on the rounding scale),
with ``n`` the reduction length of the largest shape of the group (the spec's ``reduction``
formula, default its largest dim, at most 2^16) and ``u_acc`` the unit roundoff of the
accumulation: 2^-53 for ``fp64``, else float32's 2^-24 (every policy accumulates in float32). It
admits another summation order or split than the honest computations' (pairwise, split, Chan's
combination) and nothing coarser. For a linear reference (``f(2x) = 2 f(x)`` exactly: a sum, a scan,
a matmul without bias) it is multiplied by :func:`magnitude`, the RMS of ``max(1, |ref| / s)``: the
partial sums of same-sign terms are of the size of the result, not of ``s`` (an honest sequential
float32 scan of ``torch.rand`` rows of 4097 has RMS 2.7e-5 = 452 u, above the plain slack; H200,
session 10, kb_l1_8_cumsum). For a float32 normalisation of rows of 4099 it is 3.8e-6 where
the old constant 2^-16 (n = 2^16 for every task) admitted about 17 significant bits
(tests/adversarial/redteam_s7 lp1: a 17.7-bit inverse square root, RMS 1.0e-5).

Why truncation for ``tf32``: Hopper's ``wgmma`` with ``.tf32`` operands truncates the low 13 bits
of its float32 inputs (PTX ISA, wgmma.mma_async), and Triton's plain ``tl.dot(...,
input_precision="tf32")`` hands it float32 registers (``cvt.rna.tf32.f32``, round to nearest, only
in its ``tf32x3`` lowering); cuBLAS/CUTLASS round to nearest. Both are hardware TF32, so the bound
comes from the less precise: operands rounded to nearest at 9 bits are as precise as truncation at
10 and pass (references/VERIFICATION.md rule 23).

Two more statistics of the same scaled errors, not diluted when only part of the output is low
precision (a pooled RMS over a group is: bfloat16 on 1/8 of the outputs raises it by sqrt(1/8)):

* **tail**: the fraction of elements with ``|e_i| > TAIL_K * (honest RMS of the trial +
  ACCUMULATION)`` must be at most ``TAIL_MARGIN`` x the honest computations' largest fraction at
  the same threshold ``+ TAIL_SLACK``;
* **lower format**: for float32 (float64) outputs, the fraction of finite, nonzero, normal
  outputs whose low 13 (29) mantissa bits are zero -- exactly representable with float16's
  (float32's) mantissa, as after a float16 or bfloat16 store -- must be at most the reference's
  own fraction (the float64 reference rounded to the output dtype) ``+ LOW_SLACK``. An output
  element is not counted where an honest computation's output (the reference at the job dtype,
  the policy's emulation) is in the lower format too: under ``tf32`` (float16's 10-bit mantissa)
  an attention row over one key is ``v`` rounded to TF32, so the honest TF32 v1/v2 of
  causal_attention had 35 % such outputs over the GPU plan's derived shapes against the float64
  reference's 0.01 % (session 26, H100: falsely rejected). Excluded element by element, not by
  raising the bound: a bound raised to the group's honest fraction let red team s26's ca_l2 store
  every output of the rows over more than one key in float16 (tests/adversarial/redteam_s26). One
  rounding to float16 is below every error bound (2^-11 relative); its bits are not. Outputs that
  are inputs or small integers have the reference's fraction too.

:func:`trial_sums` computes every number of one trial with one device sync.

Policies (:data:`POLICIES`), by unit roundoff ``u`` of their operands: ``fp64`` 2^-53, ``fp32``
2^-24 (IEEE 754 binary64/binary32; Higham Table 2.1), ``tf32`` 2^-11 (8-bit exponent, 10-bit
mantissa: NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020), ``fp16`` 2^-11 (IEEE 754
binary16), ``bf16`` 2^-8 (8 significant bits: Intel BFLOAT16 Hardware Numerics Definition, 2018).
The emulation of every policy accumulates in float32 and rounds once to the output dtype; the
reference at the job dtype may round more often (eager bfloat16 rounds a convolution's output
before its bias and activation), and the bound is taken from the less precise of the two, so a
candidate that rounds intermediate results but stays within ``MARGIN`` of the reference's own
error passes (the red team's p3, references/VERIFICATION.md).
"""

from __future__ import annotations

import contextlib
import math
import weakref
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import torch

from .comparison import _T
from .failures import VerificationFailure
from .refmemo import resolve

#: policy -> (unit roundoff of its operands, mantissa bits operands are truncated to in the
#: emulation; None: operands are used as they are in the job dtype).
POLICIES: Mapping[str, Tuple[float, Optional[int]]] = MappingProxyType({
    "fp64": (2.0 ** -53, None), "fp32": (2.0 ** -24, None), "tf32": (2.0 ** -11, 10),
    "fp16": (2.0 ** -11, None), "bf16": (2.0 ** -8, None),
})
#: The candidate's statistic may be this many times the honest computations' largest.
MARGIN = 1.4
#: Per policy, a factor on the honest computations' RMS (default 1), in the RMS bound and the tail
#: threshold: what the policy admits beyond the accurate functions the honest computations use.
#: ``fp32``: float32 arithmetic **with the GPU's approximate transcendentals and division** (the
#: policy of every fast-math kernel: Triton's ``tl.exp``/``tl.exp2``/``tl.rsqrt`` and ``/`` lower
#: to ``ex2.approx``, ``rsqrt.approx``, ``div.full``; CUDA's ``__expf`` errs by up to
#: ``2 + floor(|1.173 x|)`` ulp, ``__fdividef`` by 2 ulp: CUDA C++ Programming Guide, "Intrinsic
#: Functions", single-precision table), while PyTorch's reference uses correctly-rounded-ish
#: ``expf`` (2 ulp at most, about half an ulp RMS). On the H200 an honest Triton softmax_rows in
#: float32 measured 1.41x PyTorch's RMS on ordinary rows and 1.68x on rows widened 4-16x, past the
#: plain margin (session 10, redteam_s9 sh2 and the ladder's v0); 8 (3 bits) covers exponents up
#: to |x| ~ 20 and leaves 2^10 between the bound and the next lower hardware format (TF32 and
#: float16: 2^-11 against 2^-24), so bfloat16, float16 or TF32 work on a float32 task stays out
#: (redteam_s7 lp1, a 17.7-bit inverse square root: 48x PyTorch's RMS, still rejected), while a
#: float32 kernel whose exp or tanh is a few ulps off is honest fp32 (redteam_s8 gp1, a 20-ulp tanh
#: at 4.4x, rejected before and accepted since session 11). ``bf16`` and ``fp16``: 1.25, one more
#: rounding to the dtype under test: an honest kernel that stores an intermediate in the output's
#: dtype (two kernels, or a library result plus an unfused epilogue) rounds twice, RMS sqrt(2) =
#: 1.41x one rounding, past the plain margin: on the H200, TorchInductor's depthwise_conv2d in
#: bfloat16 (cuDNN's convolution rounded, then the bias added and rounded again) measured 1.42x the
#: honest RMS and was rejected (session 21). 1.25 x 1.4 = 1.75x admits two roundings with the
#: sampling spread of a 256-element group (about 4 %) and stays far below the next lower format
#: (float8 e4m3: 3 mantissa bits against bfloat16's 7, 16x) and below a bfloat16 accumulator over
#: more than a few chunks (tests/adversarial/cpu/precision/chunked_bf16_accumulator.py). ``tf32``
#: keeps 1: its honest emulation already truncates the operands, the less precise hardware mode.
#: (Read-only, as POLICIES and LOWER_FORMAT_BITS: the integrity guard compares identities, so an entry changed
#: in place by candidate code -- HEADROOM["fp32"] = 1e9 -- would pass it; session 21.)
HEADROOM: Mapping[str, float] = MappingProxyType({"fp32": 8.0, "bf16": 1.25, "fp16": 1.25})


def headroom(policy: Optional[str]) -> float:
    """The factor on the honest computations' RMS for ``policy`` (:data:`HEADROOM`, default 1)."""
    return HEADROOM.get(policy, 1.0) if policy else 1.0
#: The accumulation slack of a meter that was given none (:func:`accumulation_slack` of 2^16 terms:
#: the largest it ever is).
ACCUMULATION = 2.0 ** -16
#: The reduction length :func:`accumulation_slack` is capped at.
MAX_REDUCTION = 2 ** 16


def accumulation_slack(policy: Optional[str], n: float) -> float:
    """The precision bound's accumulation slack for a reduction of ``n`` terms (rule 23):
    ``sqrt(min(max(n, 1), 2^16)) * u_acc``, ``u_acc`` = 2^-53 for ``fp64``, else 2^-24 (float32
    accumulation). Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., sec. 2.8
    (the probabilistic ``sqrt(n) u``) and sec. 4.2 (recursive summation in any order)."""
    u = 2.0 ** -53 if policy == "fp64" else 2.0 ** -24
    return math.sqrt(min(max(float(n), 1.0), MAX_REDUCTION)) * u
#: A shape group with fewer measured elements is not judged alone (its statistic is recorded): an
#: RMS over a handful of elements says little about a rounding mode (a 2x2 image pools to 1
#: element). Such groups are pooled into one (:meth:`PrecisionMeter.pooled`).
MIN_ELEMENTS = 256
#: The pool of a job's small groups (:meth:`PrecisionMeter.pooled`: a task of few outputs, such as
#: cross_entropy's one loss per trial, has no group of :data:`MIN_ELEMENTS`) has its RMS judged
#: from this many elements: cross_entropy's CPU plan measures 11 (one trial per shape) to 23
#: (five) finite losses; the RMS of n normal errors has a relative spread of about 1/sqrt(2n)
#: (25 % at n = 8), which the pool's widened margin covers (:meth:`PrecisionMeter.pooled`), while
#: redteam_s8 cp1 (a cubic exp, whose bound there is mostly the accumulation slack) is at 2.3x it.
#: Its tail and lower-format fractions still need MIN_ELEMENTS (one element in the tail of 11 is
#: 9 %, where the bound is a fraction of a percent).
POOLED_MIN_ELEMENTS = 8
#: A group joins the pool only when its trials measured at most this many elements each on
#: average: a task of **few outputs** (a scalar loss, a handful of classes). A small group of a
#: task with ordinary outputs (a probe trial on the interpreter's two smallest shapes) is not
#: judged, as before: its own slack is sized for its group, and pooled with other groups' it
#: rejected the honest layernorm v0 (shift probe, rtol factor 100, at 1x1 and 3x37).
POOL_PER_TRIAL = 16
#: Tail: an element's scaled error is in the tail when above ``TAIL_K`` x (the trial's honest RMS
#: + ACCUMULATION) -- for a normal error, 6e-5 of the elements.
TAIL_K = 4.0
#: The candidate's tail fraction may be this many times the honest computations' largest ...
TAIL_MARGIN = 2.0
#: ... plus this fraction of the elements (2^-9: a tail of 1/512, a few elements of a small group).
TAIL_SLACK = 2.0 ** -9
#: Lower format, per job dtype: (integer view, low mantissa bits that are zero when a value is
#: exactly representable with the mantissa of the next lower format: float32 -> float16's 10
#: bits (23 - 10 = 13; bfloat16's 7 bits imply it), float64 -> float32's 23 bits).
LOWER_FORMAT_BITS = MappingProxyType({torch.float32: (torch.int32, 13), torch.float64: (torch.int64, 29)})
#: Relative tail (float32/float64 outputs under the ``fp32``/``fp64`` policies, :data:`RELATIVE_POLICIES`):
#: an element is in it when ``|out_i - ref_i| > R |ref_i| + TAIL_K slack m_i``, ``R = RELATIVE_ULPS * room *
#: u_out`` (:func:`relative_threshold`), ``slack`` the trial's accumulation slack and ``m_i = |ref_i|``, or
#: ``max(s_i, |ref_i|)`` for a linear map (:func:`trial_sums`), judged only where ``|ref_i| >= RELATIVE_FLOOR``. 2^8 ulps of the
#: output's format times the policy's headroom (8 for ``fp32``: 2^11 ulps, 2^-13 relative) is far above
#: what float32 arithmetic with approximate exp, tanh, rsqrt and division gives (a few ulps; ``__expf``
#: ``2 + 1.17 |x|`` ulps, CUDA C++ Programming Guide) and 4x below TF32's and float16's rounding (2^-11),
#: 32x below bfloat16's (2^-8). Unlike the scaled errors, it does not depend on the rounding scale
#: ``sqrt(f(x^2, p^2))``, which for a nonlinear map can be far above the output (a softmax's large
#: negative logits, GELU at x < -4: bfloat16 there was 1-2 u in scale units, tests/adversarial/redteam_s13
#: sm_p1, ge_p2) or far below the largest scale (2^-30 of it on most of a softmax row: left out of the
#: scaled statistics, redteam_s13 sm_p2).
RELATIVE_POLICIES = ("fp32", "fp64")
RELATIVE_ULPS = 2.0 ** 8
#: Outputs smaller than this are not judged by the relative tail (subnormal and flushed values).
RELATIVE_FLOOR = 2.0 ** -100
#: The candidate's relative-tail count may be ``TAIL_MARGIN`` x the honest computations' largest, plus
#: this fraction of the elements (2^-11) plus :data:`RELATIVE_EXTRA` elements (a cancellation of its own).
RELATIVE_SLACK = 2.0 ** -11
RELATIVE_EXTRA = 2
#: The candidate's lower-format fraction may exceed the reference's by this fraction (2^-6): an
#: honest float32 output has float16's mantissa by chance for 2^-13 of its values.
LOW_SLACK = 2.0 ** -6


def relative_threshold(policy: Optional[str], dtype: torch.dtype) -> Optional[float]:
    """The relative tail's threshold ``R`` for outputs of ``dtype`` under ``policy`` (None where the
    statistic does not apply: other policies, other output dtypes): ``RELATIVE_ULPS * headroom(policy)
    * u``, ``u`` the output format's unit roundoff (2^-24 float32, 2^-53 float64). :func:`trial_sums`
    adds the trial's accumulation slack ``TAIL_K * sqrt(n) u_acc`` (a sum's honest error grows with
    its length): times ``|ref_i|``, or for a linear map times ``max(s_i, |ref_i|)`` -- the size of its
    partial sums (Higham, sec. 4.2): a column sum near zero has partial sums of the size of ``s_i``,
    and an honest sequential float32 column walk of 16384 rows had 0.2 % of its outputs above
    ``|ref_i|`` times the slack (session 24, column_sum v0 / v1 on an H100: falsely rejected)."""
    if policy not in RELATIVE_POLICIES or dtype not in (torch.float32, torch.float64):
        return None
    u = 2.0 ** -24 if dtype == torch.float32 else 2.0 ** -53
    return RELATIVE_ULPS * headroom(policy) * u


def truncate_mantissa(t: torch.Tensor, bits: int) -> torch.Tensor:
    """``t`` (floating) as float32 with its mantissa truncated to ``bits`` explicit bits (toward
    zero; NaN/Inf kept)."""
    x = t.float().contiguous()
    mask = ~((1 << (23 - bits)) - 1)
    y = (x.view(torch.int32) & mask).view(torch.float32)
    return torch.where(torch.isfinite(x), y, x)


@contextlib.contextmanager
def tf32(allowed: bool):
    """cuDNN and cuBLAS float32 paths with TF32 ``allowed`` (restored afterwards). Setting the legacy
    switches back writes "ieee" into the newer ``fp32_precision`` settings where "none" (inherited,
    meaning "ieee") was: the same setting to the integrity guard (``verify.guard.numeric_flags``
    resolves "none"). Raises TamperingError when PyTorch refuses to read the switches (a candidate
    left the legacy and newer APIs mixed: red team s27 mm1)."""
    try:
        cudnn, matmul = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    except RuntimeError as e:
        from .failures import TamperingError

        raise TamperingError(f"the TF32 settings were left in a state PyTorch cannot read ({str(e)[:160]}): "
                             "the candidate changed process-wide numeric settings") from None
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul


class _Mapped:
    """``model`` with its floating parameters and buffers replaced by copies in ``dtype`` (``fn``
    applied to each), called in eval mode through :func:`torch.func.functional_call`: what
    ``copy.deepcopy(model).to(dtype).eval()`` computes, without copying the module (a fresh
    reference is built per trial: rule 21; the deep copies were 0.9 ms each on the H200's host,
    three per trial). The copies are taken when this is made, so a model later turned float64
    (:func:`~kernelsynth.verify.comparison.run_reference`) still runs in ``dtype``; the model's
    own training flags are restored after each call."""

    def __init__(self, model: torch.nn.Module, dtype: torch.dtype, fn=None):
        model = resolve(model)  # a lazily built reference (refmemo.LazyReference): its module
        self.model, self.state = model, {}
        with torch.no_grad():
            for name, t in list(model.named_parameters()) + list(model.named_buffers()):
                if t.is_floating_point():
                    y = t.detach().to(dtype, copy=True)
                    if fn is not None:
                        y.copy_(fn(y))
                    self.state[name] = y
                else:
                    self.state[name] = t.detach().clone()

    def __call__(self, *args):
        modes = [(m, m.training) for m in self.model.modules()]
        self.model.eval()
        try:
            return torch.func.functional_call(self.model, self.state, args)
        finally:
            for m, training in modes:
                m.training = training


def _mapped(model: torch.nn.Module, dtype: torch.dtype, fn=None) -> _Mapped:
    """A copy of ``model`` in ``dtype`` (floating parameters and buffers), with ``fn`` applied
    to each of them, in eval mode (:class:`_Mapped`)."""
    return _Mapped(model, dtype, fn)


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

    def terms(self, ref_model, inputs, ref64: torch.Tensor, memo=None) -> Dict[str, object]:
        """``{"dtype", "strides", "scale", "honest"}`` for one trial: the reference's output dtype and
        strides at the job dtype (``strides`` None when it returned no tensor), the rounding scale ``sqrt(f(x^2, p^2))`` (float32) and the honest outputs (device
        reference at the job dtype; the emulated policy, rounded to the job dtype). ``scale`` and
        ``honest`` are None without a policy or for a non-floating output. With them, ``linear``:
        whether the reference at the job dtype gives exactly twice its output for twice its floating
        inputs (scaling by 2 is exact in binary floating point, so a linear map -- a sum, a scan, a
        matmul without bias -- does; a bias, a normalisation or a nonlinearity does not), which
        widens the accumulation slack by :func:`magnitude` (:func:`trial_sums`). ``memo``: a
        :class:`~kernelsynth.verify.refmemo.ReferenceMemo` that may already hold them (they depend
        on the model and ``inputs`` alone: ``ref64`` is their reference's output)."""
        if memo is None:
            return self._terms(ref_model, inputs, ref64)
        return memo.cached(ref_model, inputs, ("terms", self.policy, str(self.dtype)),
                           lambda: self._terms(ref_model, inputs, ref64))

    def _terms(self, ref_model, inputs, ref64: torch.Tensor) -> Dict[str, object]:
        lo = self.at_dtype(ref_model, inputs)
        out: Dict[str, object] = {"dtype": lo.dtype if isinstance(lo, torch.Tensor) else None,
                                  "strides": tuple(lo.stride()) if isinstance(lo, torch.Tensor) else None,
                                  "scale": None, "honest": []}
        if not self.policy or not isinstance(lo, torch.Tensor) or not lo.is_floating_point():
            return out
        _, sq, emu = self._copies(ref_model)
        with torch.no_grad(), tf32(False):
            out["scale"] = sq(*_inputs(inputs, torch.float32, lambda x: x.float() * x.float())).abs().sqrt()
            emulated = ref64 if emu is None else \
                emu(*_inputs(inputs, torch.float32, lambda x: truncate_mantissa(x, POLICIES[self.policy][1])))
        out["honest"] = [lo, emulated.to(lo.dtype)]
        with torch.no_grad(), tf32(self.policy == "tf32"):  # f(2x) = 2 f(x) bit for bit: a linear map
            twice = self._copies(ref_model)[0](*_inputs(inputs, None, lambda x: x * 2))
        out["linear"] = isinstance(twice, torch.Tensor) and twice.shape == lo.shape and torch.equal(twice, lo * 2)
        return out


class _Scaled:
    """What :func:`_scaled_errors` derives from ``ref64`` and ``scale`` alone -- the float64
    reference ``r`` and scale ``s`` on ``ref64``'s device, the mask ``base`` of the elements whose
    reference is finite and whose scale is finite, positive and above 2^-30 of its largest finite
    value, and the divisor ``where(base, s, 1)`` -- computed once per trial and shared by the
    candidate's output and every honest output (:func:`trial_sums`: each output used to redo them,
    about a dozen device operations apiece). ``ok``: False when the scale's shape is not the
    reference's or the reference is empty (then :meth:`errors` answers None)."""

    def __init__(self, ref64: torch.Tensor, scale: torch.Tensor):
        dev = self.dev = ref64.device
        self.r, self.s = ref64.detach().double(), scale.detach().to(dev, torch.float64)
        self.ok = self.s.shape == self.r.shape and self.r.numel() != 0
        self.zero = torch.zeros((), dtype=torch.float64, device=dev)
        if not self.ok:
            return
        finite_s = torch.isfinite(self.s)
        smax = torch.where(finite_s, self.s, self.zero).amax()
        self.finite_r = torch.isfinite(self.r)
        self.base = self.finite_r & finite_s & (self.s > smax * 2.0 ** -30) & (self.s > 0)
        self.divisor = torch.where(self.base, self.s, torch.ones((), dtype=torch.float64, device=dev))

    def errors(self, out: torch.Tensor):
        """``(e, keep, out - r, isfinite(out))`` of one output (float64 on the reference's device;
        ``e`` and ``keep`` as :func:`_scaled_errors`: where ``keep`` holds, ``base`` does, so the
        divisor there is ``s``), or None when its shape is not the reference's or nothing is kept."""
        # _T.detach: a fresh tensor object, so instance attributes planted on ``out`` after rule 3's
        # check (a gc callback, a __del__) cannot answer the reads below
        o = _T.detach(out).to(self.dev, torch.float64)
        if not self.ok or o.shape != self.r.shape:
            return None
        finite = torch.isfinite(o)
        keep = self.base & finite
        diff = o - self.r
        return torch.where(keep, diff / self.divisor, self.zero), keep, diff, finite


def _scaled_errors(out: torch.Tensor, ref64: torch.Tensor, scale: torch.Tensor):
    """``(e, keep)`` on ``ref64``'s device: ``e_i = (out_i - ref_i) / s_i`` (float64; 0 where not
    kept) and the mask of the elements where the reference and the output are finite and the scale
    is above 2^-30 of its largest value (smaller ones are left to the absolute tolerance). None when
    the shapes differ or the output is empty (:class:`_Scaled`)."""
    got = _Scaled(ref64, scale).errors(out)
    return None if got is None else got[:2]


def sq_error_sum(out: torch.Tensor, ref64: torch.Tensor, scale: torch.Tensor) -> Tuple[float, int]:
    """``(sum_i ((out_i - ref_i) / s_i)^2, count)`` over the elements :func:`_scaled_errors` keeps.
    Computed on ``ref64``'s device (a GPU in a worker: the timing shape's outputs have millions of
    elements)."""
    got = _scaled_errors(out, ref64, scale)
    if got is None:
        return 0.0, 0
    e, keep = got
    total, count = torch.stack([(e * e).sum(), keep.sum().to(e.dtype)]).tolist()  # one device sync
    return float(total), int(count)


def _low_bits_mask(t: torch.Tensor):
    """``(low, normal)`` boolean masks of ``t``'s elements: finite, nonzero and normal (``normal``),
    and of those the ones exactly representable with :data:`LOWER_FORMAT_BITS` explicit mantissa
    bits (``low``: the low mantissa bits of their format are zero). None for a dtype without a lower
    format in :data:`LOWER_FORMAT_BITS` or an empty tensor."""
    spec = LOWER_FORMAT_BITS.get(t.dtype)
    if spec is None or _T.numel(t) == 0:
        return None
    int_dtype, cut = spec
    x = _T.detach(t).contiguous()  # a fresh object: see _scaled_errors
    normal = torch.isfinite(x) & (x.abs() >= torch.finfo(x.dtype).tiny)
    return normal & ((x.view(int_dtype) & ((1 << cut) - 1)) == 0), normal


def honest_low_mask(honest: Sequence[torch.Tensor], shape) -> Optional[torch.Tensor]:
    """The elements (a boolean tensor of ``shape``) where some output of ``honest`` of that shape
    is exactly representable in its lower format (:func:`_low_bits_mask`), or None when none of
    them has one. The oracle sends it to the parent's audit (``honest_low``), which has the
    candidate's output and the float64 reference but not the honest outputs."""
    mask = None
    for h in honest:
        other = _low_bits_mask(h) if isinstance(h, torch.Tensor) and tuple(h.shape) == tuple(shape) else None
        if other is not None:
            mask = other[0] if mask is None else mask | other[0].to(mask.device)
    return mask


def _low_bits_counts(t: torch.Tensor, honest: Sequence[torch.Tensor] = (),
                     exclude: Optional[torch.Tensor] = None):
    """``(low, total)`` as int64 device tensors (exact; :func:`trial_sums` converts all its counts
    by one operation): of the finite, nonzero, normal elements of ``t`` (``total``), how many are exactly representable with :data:`LOWER_FORMAT_BITS` explicit mantissa
    bits (``low``) where no output of ``honest`` (same shape and dtype) is, nor ``exclude`` (a
    boolean mask of ``t``'s shape: :func:`honest_low_mask` as the oracle computed it, for the
    parent's audit): an element the honest computation at the policy also gives in the lower
    format -- an attention row over one key is ``v`` rounded to TF32, float16's mantissa -- is not
    counted (session 26; pooling the honest fraction over a group instead let red team s26's ca_l2
    store every other output in float16). Zeros for a dtype without a lower format."""
    got = _low_bits_mask(t)
    if got is None:
        z = torch.zeros((), dtype=torch.int64, device=t.device)
        return z, z
    low, normal = got
    other = honest_low_mask(honest, t.shape)
    for m in (other, exclude):
        if m is not None:
            low = low & ~m.to(device=low.device, dtype=torch.bool)
    return low.sum(), normal.sum()


def magnitude(ref64: torch.Tensor, scale: torch.Tensor) -> float:
    """The accumulation slack's factor for a linear map: ``sqrt(mean_i max(1, |ref_i| / s_i)^2)``
    over the elements :func:`_scaled_errors` keeps (1.0 when none). For a sum ``y = sum_k t_k``
    the partial sums of any order are of the size of ``y`` when the terms share a sign (an
    inclusive scan of ``torch.rand`` inputs: ``|y| / s ~ 0.87 sqrt(n)``) and of the size of ``s``
    when they have mean zero (``|y| / s ~ 1``); rounding errors are ``u`` times the partial sums
    (Higham, sec. 4.2), so the slack ``sqrt(n) u`` in units of ``s`` is that many times larger.
    Capped at ``sqrt(MAX_REDUCTION)``."""
    return _magnitude(_Scaled(ref64, scale))


def _magnitude(base: "_Scaled") -> float:
    """:func:`magnitude` from a trial's :class:`_Scaled` (the elements :func:`_scaled_errors` keeps
    of ``ref64`` itself are ``base.base``: its ``isfinite(ref64)`` is already in it)."""
    if not base.ok:
        return 1.0
    keep = base.base
    ratio = torch.where(keep, (base.r.abs() / base.divisor).clamp(min=1.0), base.zero)
    total, count = torch.stack([(ratio * ratio).sum(), keep.sum().to(torch.float64)]).tolist()
    return min(math.sqrt(total / count), math.sqrt(MAX_REDUCTION)) if count else 1.0


def _tail_factor(ref64: torch.Tensor, scale: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``s_i / max(s_i, |ref_i|)`` where kept (1 elsewhere), float64 on ``ref64``'s device: the tail
    statistic measures each error against the larger of the rounding scale and the output itself.
    Any floating-point result errs by at least its own final rounding, ``u |y_i|`` (Higham, sec.
    2.2), so a scale below ``|y_i|`` magnifies an honest relative error: for a softmax,
    ``sqrt(softmax(x^2))`` is near 0 on most of a row, and an honest online softmax on the H200
    (tests/adversarial/redteam_s12 s3: few-ulp relative errors from its rescaled running sums and
    Triton's approximate exp and division) had 0.74 % of its outputs in the tail there, PyTorch's
    0 %. The RMS statistic keeps the plain scale (its bounds are calibrated on it)."""
    dev = ref64.device
    return _factor(scale.detach().to(dev, torch.float64), ref64.detach().double().abs(), keep)


def _factor(s: torch.Tensor, rabs: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """:func:`_tail_factor` from the float64 scale ``s`` and ``|ref64|`` (``rabs``) on one device."""
    r = torch.nan_to_num(rabs, nan=0.0, posinf=0.0)
    big = torch.maximum(s, r)
    one = torch.ones((), dtype=torch.float64, device=s.device)
    positive = big > 0  # once for both uses
    return torch.where(keep & positive, s / torch.where(positive, big, one), one)


def trial_sums(out: torch.Tensor, ref64: torch.Tensor, scale: torch.Tensor,
               honest: Sequence[torch.Tensor] = (), threshold: Optional[float] = None,
               slack: float = ACCUMULATION, linear: bool = False, room: float = 1.0,
               relative: Optional[float] = None, low_exclude: Optional[torch.Tensor] = None) -> Dict[str, object]:
    """Every number the precision rule pools for one trial, computed on ``ref64``'s device with
    one device sync (rule 23; :class:`PrecisionMeter`).

    ``out``: the candidate's output (its dtype already checked: the expected one); ``ref64``:
    the float64 reference; ``scale``: the rounding scale; ``honest``: the honest outputs (worker,
    oracle) or none (the parent's audit, which passes the oracle's ``threshold``). The tail
    threshold is ``TAIL_K * (room * trial honest RMS + slack)``, errors and the honest RMS both
    taken against the larger of the scale and the output (:func:`_tail_factor`), the trial honest RMS being the
    largest of the honest outputs' RMS on this trial and ``room`` the policy's :func:`headroom`; ``slack``: the trial's accumulation slack
    (:func:`accumulation_slack`), times :func:`magnitude` when ``linear`` (the reference is a
    linear map: :meth:`HonestReferences.terms`'s ``linear``). ``relative``: the relative tail's
    threshold ``R`` (:func:`relative_threshold`; None: not measured): elements with ``|ref| >=
    RELATIVE_FLOOR`` and ``|out - ref| > R |ref| + TAIL_K * slack * m`` (``slack`` as given, before
    the magnitude; ``m = |ref|``, for a ``linear`` map ``max(scale, |ref|)``), of the candidate and
    of each honest output. ``low_exclude``: elements the lower-format count leaves out besides
    those ``honest`` gives in the lower format (the oracle's :func:`honest_low_mask`, for the
    parent's audit, which has no honest outputs).

    On one CUDA device the numbers come from :mod:`kernelsynth.verify.fused_sums` (three Triton passes;
    the same counts, the same sums to rounding: ``tests/test_fused_sums.py``), elsewhere from the
    PyTorch operations below (the parent's audit, the CPU path).

    Returns ``{"slack": the trial's slack, "candidate": (sum e^2, n), "tail": (elements with |e| > threshold, n),
    "low": (outputs exactly representable in the lower format where no honest output is, finite nonzero
    normal outputs), "ref_low": (the same of ``ref64`` rounded to ``out``'s dtype, every such element
    counted; (0, 0) without honest outputs),
    "threshold": float, "honest": [(sum e^2, n)], "honest_tail": [(tail, n)], "rel": (elements above R, n)
    or None, "honest_rel": [(elements above R, n)], "rel_threshold": R or None}``.
    """
    if ref64.device.type == "cuda":  # three Triton passes, not ~120 operations (imported where it runs)
        from . import fused_sums
        if fused_sums.supported(out, ref64, scale, honest, low_exclude):
            return fused_sums.fused_trial_sums(out, ref64, scale, honest, threshold, slack, linear, room, relative,
                                               low_exclude, TAIL_K, MAX_REDUCTION)
    dev = ref64.device
    zero = torch.zeros((), dtype=torch.float64, device=dev)
    base = _Scaled(ref64, scale)  # what depends on the reference and the scale alone: once for every output
    acc = slack  # per term, before the linear map's magnitude (the relative tail's, element by element)
    if linear:
        slack = slack * _magnitude(base)
    got = base.errors(out)
    if got is None:
        return {"slack": slack, "candidate": (0.0, 0), "tail": (0, 0), "low": (0, 0), "ref_low": (0, 0), "threshold": 0.0,
                "honest": [(0.0, 0)] * len(honest), "honest_tail": [(0, 0)] * len(honest), "rel": None,
                "honest_rel": [], "rel_threshold": None}
    hs = [base.errors(h) for h in honest]
    # the element counts stay int64 (exact) until the one conversion below; ``n`` divides a float64 sum
    # there as it did converted (int64 -> float64 is exact below 2^53: the same quotient, bit for bit)
    hsq = [((e * e).sum(), keep.sum()) for e, keep, _, _ in hs]
    e, keep, diff, finite = got
    rabs = base.r.abs()
    f = _factor(base.s, rabs, keep)
    hf = [he * f for he, _, _, _ in hs]  # the honest errors in the tail's units (against max(scale, |ref|))
    if threshold is None:
        rms = torch.stack([(x ** 2).sum().div(n.clamp(min=1)).sqrt() for x, (_, n) in zip(hf, hsq)]
                          ).amax() if hsq else zero
        thr = TAIL_K * (room * rms + slack)
    else:
        thr = torch.tensor(float(threshold), dtype=torch.float64, device=dev)
    # float64 sums and int64 counts, each a scalar on ``dev`` (the output's own counts moved there):
    # the counts converted to float64 by one operation, all read back with one device sync
    sums = [(e * e).sum(), thr]
    counts = [keep.sum(), ((e * f).abs() > thr).sum(),
              *(c.to(dev) for c in _low_bits_counts(out, honest, low_exclude))]
    if honest:
        counts += list(_low_bits_counts(ref64.to(out.dtype)))
    else:
        counts += [torch.zeros((), dtype=torch.int64, device=dev)] * 2
    for x, (s, n) in zip(hf, hsq):
        sums.append(s)
        counts += [n, (x.abs() > thr).sum()]
    if relative is not None:  # the relative tail: the candidate, then each honest output
        judged = base.finite_r & (rabs >= RELATIVE_FLOOR)
        if linear:  # a sum errs by u times its partial sums, of the size of max(s_i, |y_i|), not of |y_i|
            bar = rabs * relative + (TAIL_K * acc) * torch.maximum(torch.where(base.base, base.s, zero), rabs)
        else:
            bar = rabs * (relative + TAIL_K * acc)
        for d, fin in ((diff, finite), *((hd, hfin) for _, _, hd, hfin in hs)):
            mask = judged & fin
            counts += [(mask & (d.abs() > bar)).sum(), mask.sum()]
    v = torch.cat([torch.stack(sums), torch.stack(counts).to(torch.float64)]).tolist()  # one device sync
    c = [int(x) for x in v[len(sums):]]  # the counts, in the order appended
    v = v[:len(sums)]
    hon = [(v[2 + i], c[6 + 2 * i], c[7 + 2 * i]) for i in range(len(hs))]  # (sum e^2, n, tail) per honest output
    k = 6 + 2 * len(hs)
    rel = [(c[k + 2 * i], c[k + 2 * i + 1]) for i in range(1 + len(honest))] if relative is not None else None
    return {"slack": slack, "candidate": (v[0], c[0]), "tail": (c[1], c[0]), "low": (c[2], c[3]),
            "ref_low": (c[4], c[5]), "threshold": v[1],
            "honest": [(h[0], h[1]) for h in hon], "honest_tail": [(h[2], h[1]) for h in hon],
            "rel": rel[0] if rel else None, "honest_rel": rel[1:] if rel else [], "rel_threshold": relative}


@dataclass
class PrecisionMeter:
    """Pools the precision statistics of the candidate and of the honest computations over the
    trials of one shape group, and applies the rule (:meth:`check`): the RMS, the tail fraction and
    the lower-format fraction (module docstring)."""

    policy: Optional[str]
    candidate: List[float] = field(default_factory=lambda: [0.0, 0])
    honest: List[List[float]] = field(default_factory=list)
    tail: List[int] = field(default_factory=lambda: [0, 0])
    honest_tail: List[List[int]] = field(default_factory=list)
    low: List[int] = field(default_factory=lambda: [0, 0])
    ref_low: List[int] = field(default_factory=lambda: [0, 0])
    #: the relative tail: the candidate's (count, n) and each honest computation's (None: not measured)
    rel: Optional[List[int]] = None
    honest_rel: List[List[int]] = field(default_factory=list)
    #: the largest accumulation slack of the pooled trials (None: none given, :data:`ACCUMULATION`)
    slack: Optional[float] = None
    #: the RMS is judged from this many elements (:data:`MIN_ELEMENTS`; a pool of small groups:
    #: :data:`POOLED_MIN_ELEMENTS`)
    min_elements: int = MIN_ELEMENTS
    #: the bound's factor on the honest RMS (:data:`MARGIN`; a pool of n elements: widened by
    #: ``1 + sqrt(2 / n)``, :meth:`pooled`)
    margin: float = MARGIN
    #: trials pooled (:meth:`add_sums`)
    trials: int = 0

    @classmethod
    def pooled(cls, meters: Sequence["PrecisionMeter"]) -> Optional["PrecisionMeter"]:
        """One meter of the ``meters`` (a job's shape groups) that measured fewer than
        :data:`MIN_ELEMENTS` elements and at most :data:`POOL_PER_TRIAL` per trial, every sum added, judged from :data:`POOLED_MIN_ELEMENTS`
        (rule 23: a task whose outputs are few per trial -- a scalar loss -- is judged over all its
        trials), or None when none of them measured anything. Its accumulation slack is the RMS of
        the groups' slacks weighted by their elements (a group of long reductions does not lend
        its slack to the others), and its margin is :data:`MARGIN` times ``1 + sqrt(2 / n)`` (the
        RMS of n normal errors has a relative spread of about ``1 / sqrt(2 n)``: an honest kernel
        at the reference's precision stays inside it over a few elements; n = 11: 2.2x)."""
        small = [m for m in meters if m is not None and m.policy and 0 < m.candidate[1] < MIN_ELEMENTS
                 and m.candidate[1] <= POOL_PER_TRIAL * max(1, m.trials)]
        if not small:
            return None
        out = cls(small[0].policy, min_elements=POOLED_MIN_ELEMENTS)
        weighted = 0.0
        for m in small:
            out._pool([out.candidate], [m.candidate])
            out._pool(out.honest, m.honest)
            out._pool([out.tail], [m.tail])
            out._pool(out.honest_tail, m.honest_tail)
            out._pool([out.low], [m.low])
            out._pool([out.ref_low], [m.ref_low])
            if m.rel is not None:
                out.rel = out.rel or [0, 0]
                out._pool([out.rel], [m.rel])
                out._pool(out.honest_rel, m.honest_rel)
            weighted += m.candidate[1] * m.accumulation ** 2
        out.slack = math.sqrt(weighted / out.candidate[1])
        out.trials = sum(m.trials for m in small)
        out.margin = MARGIN * (1.0 + math.sqrt(2.0 / out.candidate[1]))
        return out

    @staticmethod
    def _pool(into: List[List[float]], pairs) -> None:
        for i, (s, n) in enumerate(pairs):
            if i == len(into):
                into.append([0, 0])
            into[i][0] += s
            into[i][1] += n

    def add_sums(self, candidate: Tuple[float, int], honest: Sequence[Tuple[float, int]],
                 sums: Optional[Dict[str, object]] = None, reference: Optional[Dict[str, object]] = None,
                 slack: Optional[float] = None) -> None:
        """Pool one trial: the candidate's and the honest ``(sum e^2, n)``; with ``sums`` (from
        :func:`trial_sums`) also the candidate's tail and lower-format counts, and the honest
        tail and the reference's lower-format counts from ``reference`` (default: ``sums``; the
        parent's audit passes the oracle's entry). ``slack``: the trial's accumulation slack
        (:func:`accumulation_slack`; the group's bound takes the largest)."""
        if slack is not None:
            self.slack = slack if self.slack is None else max(self.slack, slack)
        self.trials += 1
        self._pool([self.candidate], [candidate])
        self._pool(self.honest, honest)
        if sums is not None:
            reference = sums if reference is None else reference
            self._pool([self.tail], [sums["tail"]])
            self._pool([self.low], [sums["low"]])
            self._pool(self.honest_tail, reference.get("honest_tail", []))
            self._pool([self.ref_low], [reference.get("ref_low", (0, 0))])
            if sums.get("rel") is not None and reference.get("honest_rel"):
                self.rel = self.rel or [0, 0]
                self._pool([self.rel], [sums["rel"]])
                self._pool(self.honest_rel, reference["honest_rel"])

    def add(self, out: torch.Tensor, ref64: torch.Tensor, terms: Dict[str, object],
            slack: Optional[float] = None) -> Optional[Dict[str, object]]:
        """One trial: the candidate's ``out`` and the honest outputs of ``terms`` (from
        :meth:`HonestReferences.terms`) against the float64 reference; ``slack``: the trial's
        accumulation slack (None: :data:`ACCUMULATION`). Returns the trial's :func:`trial_sums`
        (None when ``terms`` has no scale: nothing measured)."""
        if terms.get("scale") is None:
            return None
        base = ACCUMULATION if slack is None else slack
        sums = trial_sums(out, ref64, terms["scale"], terms["honest"], slack=base,
                          linear=bool(terms.get("linear")), room=headroom(self.policy),
                          relative=relative_threshold(self.policy, terms.get("dtype") or out.dtype))
        self.add_sums(sums["candidate"], sums["honest"], sums, slack=None if slack is None else sums["slack"])
        return sums

    @property
    def accumulation(self) -> float:
        """The slack of the bound: the largest pooled trial's, else :data:`ACCUMULATION`."""
        return ACCUMULATION if self.slack is None else self.slack

    def stats(self) -> Dict[str, Optional[float]]:
        """``{"rms", "honest_rms", "bound", "tail", "honest_tail", "tail_bound", "low",
        "ref_low", "low_bound"}`` (None when nothing was measured; the tail and lower-format
        entries None when not measured: the parent's audit of an old-format entry, a job dtype
        without a lower format)."""
        keys = ("rms", "honest_rms", "bound", "tail", "honest_tail", "tail_bound", "low", "ref_low", "low_bound",
                "rel", "honest_rel", "rel_bound")
        st: Dict[str, Optional[float]] = dict.fromkeys(keys)
        if not self.policy or self.candidate[1] == 0:
            return st
        st["rms"] = math.sqrt(self.candidate[0] / self.candidate[1])
        st["honest_rms"] = max((math.sqrt(s / n) for s, n in self.honest if n), default=0.0)
        st["bound"] = self.margin * headroom(self.policy) * st["honest_rms"] + self.accumulation
        if self.tail[1] and any(n for _, n in self.honest_tail):
            st["tail"] = self.tail[0] / self.tail[1]
            st["honest_tail"] = max(t / n for t, n in self.honest_tail if n)
            st["tail_bound"] = TAIL_MARGIN * st["honest_tail"] + TAIL_SLACK
        if self.low[1] and self.ref_low[1]:
            st["low"] = self.low[0] / self.low[1]
            st["ref_low"] = self.ref_low[0] / self.ref_low[1]
            st["low_bound"] = st["ref_low"] + LOW_SLACK
        if self.rel is not None and self.rel[1] and any(n for _, n in self.honest_rel):
            st["rel"] = self.rel[0] / self.rel[1]
            st["honest_rel"] = max(c / n for c, n in self.honest_rel if n)
            st["rel_bound"] = TAIL_MARGIN * st["honest_rel"] + RELATIVE_SLACK + RELATIVE_EXTRA / self.rel[1]
        return st

    def check(self, where: str) -> Dict[str, Optional[float]]:
        """:meth:`stats`; raises VerificationFailure naming ``where`` when the rule fails."""
        st = self.stats()
        if st["rms"] is None or self.candidate[1] < self.min_elements:
            return st
        if not st["rms"] <= st["bound"]:
            raise VerificationFailure(
                f"{where}: precision below the declared policy {self.policy}: RMS error over the rounding scale "
                f"{st['rms']:.3e} > {st['bound']:.3e} ({self.margin * headroom(self.policy):.3g} x {st['honest_rms']:.3e}, the honest computation "
                f"at {self.policy} on the same inputs, + the accumulation slack {self.accumulation:.2e}) (precision rule)")
        if st["tail"] is not None and self.tail[1] >= MIN_ELEMENTS and not st["tail"] <= st["tail_bound"]:
            raise VerificationFailure(
                f"{where}: precision below the declared policy {self.policy}: {st['tail']:.2%} of the outputs have a "
                f"scaled error above {TAIL_K} x (the honest RMS + {self.accumulation:.2e}), the honest computation "
                f"{st['honest_tail']:.2%} (bound {TAIL_MARGIN} x that + {TAIL_SLACK:.2%}): low precision on "
                "part of the output (precision rule, tail)")
        if st["low"] is not None and self.low[1] >= MIN_ELEMENTS and not st["low"] <= st["low_bound"]:
            raise VerificationFailure(
                f"{where}: output rounded to a lower format: {st['low']:.2%} of the finite nonzero outputs are exactly "
                f"representable with the mantissa of float16 where no honest computation's are, the reference's "
                f"{st['ref_low']:.2%} (bound + {LOW_SLACK:.2%}) (precision rule, lower format)")
        if st["rel"] is not None and self.rel[1] >= MIN_ELEMENTS and not st["rel"] <= st["rel_bound"]:
            raise VerificationFailure(
                f"{where}: precision below the declared policy {self.policy}: {st['rel']:.2%} of the outputs have a "
                f"relative error above {RELATIVE_ULPS * headroom(self.policy):g} ulps (+ the accumulation slack), the "
                f"honest computation {st['honest_rel']:.2%} (bound {TAIL_MARGIN} x that + {RELATIVE_SLACK:.3%} + "
                f"{RELATIVE_EXTRA} elements): low precision on part of the output (precision rule, relative tail)")
        return st
