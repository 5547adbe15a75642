"""Trial inputs (VERIFICATION.md rules 1 and 8): seeded per (run seed, shape, trial), with edge
values planted for ``exact`` comparisons. Deterministic, so the independent reference process
(:func:`kernelsynth.jobs.oracle`) rebuilds the same inputs bit for bit."""

from __future__ import annotations

import hashlib
import math
from typing import Any, Callable, Dict, Optional

import torch

from .comparison import _bits


def trial_seed(seed: int, *parts) -> int:
    """A 63-bit seed derived from the run seed and the trial's coordinates (stable across runs)."""
    digest = hashlib.sha256(repr((seed,) + parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def param_seed(seed: int, group: str, si: int, t: int) -> int:
    """The seed ``torch.manual_seed`` gets before the reference module and the candidate of trial
    ``t`` of shape number ``si`` of ``group`` (``listed``, ``derived``, ``timing``, ``timed``) are
    built (VERIFICATION.md rule 21: parameters are inputs, fresh per trial). The independent
    reference process builds the same parameters from it."""
    return trial_seed(seed, "init", group, si, t)


def shape_label(shape: Dict[str, int]) -> str:
    """``{"M": 3, "N": 5}`` -> ``"3x5"``, as reasons name shapes."""
    return "x".join(str(v) for v in shape.values())


def reach(values) -> tuple:
    """What a module can see of ``values`` (``get_inputs``' or ``get_init_inputs``' list) apart
    from the numbers drawn into its tensors: each tensor's shape and dtype, anything else (an int,
    a float, a string; lists and tuples item by item) by ``repr``. Two shapes of a task whose
    reference gets equal ``reach`` of both lists are one problem under two names: the dims that
    differ never reach the reference (:func:`kernelsynth.jobs.oracle`, VERIFICATION.md rule 12)."""
    if isinstance(values, torch.Tensor):
        return ("tensor", tuple(values.shape), str(values.dtype))
    if isinstance(values, (list, tuple)):
        return tuple(reach(v) for v in values)
    return ("value", repr(values))


def trial_inputs(get_inputs: Callable, shape: Dict[str, int], si: int, t: int, seed: int, dtype: torch.dtype,
                 device: torch.device, special_values: bool, probe: Optional[Dict[str, Any]] = None):
    """The inputs of trial ``t`` of shape number ``si`` and the generator that made them (it goes
    on to draw the staleness check's fresh values). Trials 1 and 3 draw trial 0's inputs again
    (their modules get other parameters, VERIFICATION.md rule 21: trial 1 another weight, trial 3
    the same weight and another bias, so an output memo keyed on the input alone, or on the input
    and the weight -- redteam_s16 c4 -- is stale there); for ``special_values`` trial 1's edge
    values are planted on top. With a
    ``probe`` (an input-range probe of the spec, rule 24) trial 0's inputs are drawn and
    transformed by :func:`apply_probe`.
    Deterministic: the independent reference process (:func:`kernelsynth.jobs.oracle`) rebuilds
    the same inputs bit for bit."""
    label = shape_label(shape)
    gen = torch.Generator(device=device).manual_seed(trial_seed(seed, si, 0 if t in (1, 3) or probe else t, label))
    inputs = list(get_inputs(shape, dtype, device, gen))
    if probe:
        inputs = apply_probe(inputs, probe, gen)
    elif special_values and t == 1:
        plant = plant_nonfinite if special_values == "nonfinite" else plant_special_values
        inputs = [plant(x, gen) for x in inputs]
    if (si + t) % 2 == 1:  # every other trial: inputs that do not start their storage (rule 1)
        inputs = [at_storage_offset(x) for x in inputs]
    return inputs, gen


#: Bytes before an offset input's first element (:func:`at_storage_offset`): 64 keeps every
#: alignment a kernel may rely on (16-byte vector loads, Triton's divisibility-by-16 specialisation
#: of pointers: no new compile), while the storage's base is no longer the tensor's first element.
STORAGE_OFFSET_BYTES = 64


def at_storage_offset(x):
    """``x``'s values in a contiguous tensor that starts :data:`STORAGE_OFFSET_BYTES` into its storage
    (``storage_offset() > 0``, as ``t[1:]``, ``torch.chunk(t, 2)[1]`` or one slice of a stacked
    buffer have); the bytes before it are left unwritten. Non-tensors, empty and non-contiguous
    tensors are returned as they are. A kernel that addresses the storage's base instead of the
    tensor's first element (tests/adversarial/redteam_s11 fz1: every input the harness built had
    offset 0) reads the wrong values (session 11)."""
    if not isinstance(x, torch.Tensor) or x.numel() == 0 or not x.is_contiguous():
        return x
    k = max(1, STORAGE_OFFSET_BYTES // x.element_size())
    buf = torch.empty(x.numel() + k, dtype=x.dtype, device=x.device)
    y = buf[k:].view(x.shape)
    y.copy_(x)
    return y


def apply_probe(inputs, probe: Dict[str, Any], gen: torch.Generator) -> list:
    """The inputs of an input-range probe trial (VERIFICATION.md rule 24): every floating tensor
    input transformed by ``probe`` (a normalised entry of the spec's ``probes:``,
    :func:`kernelsynth.spec.load_spec`), computed in float64 and rounded once to the input's dtype:

    * ``{"kind": "scale", "value": s}``: ``x * s`` (a power of two is exact);
    * ``{"kind": "shift", "value": c}``: every row (all dims but the last) gets its own offset
      ``c * (1 + U)``, ``U`` uniform in [0, 1) drawn from ``gen``, added along the last dim
      (softmax- and norm-like tasks are invariant to it row by row; a one-dim input is one row);
    * ``{"kind": "mask", "value": v}``: entries of every row become ``v`` (``-inf``, or a very
      negative number), each row drawn as one of three patterns: scattered (each entry with
      probability :data:`MASK_FRACTION`), a suffix ``j >= c`` (causal or right padding) or a prefix
      ``j < c`` (left padding), ``c`` uniform in ``[1, n - 1]``; one entry per row at a drawn
      position is always kept (a row is never all masked; a row of one entry is kept). These are
      the masks attention and vocabulary-masked losses feed a softmax (redteam_s8 sr1, an exp valid
      only on [-87, 0]); the runs reach whole masked blocks (an online softmax whose running max
      is still -inf);
    * ``{"kind": "abs", "value": s}``: ``s |x|`` (rows of one sign: a scan or sum of probabilities
      grows with its length, where a low-precision accumulator shows);
    * ``{"kind": "bits", "value": b}``: ``x`` rounded to nearest even with ``b`` significant bits
      (``torch.frexp``: mantissa in [0.5, 1) times 2^b, rounded, scaled back; 8 gives bfloat16's
      values in float32, as activations upcast from a bfloat16 layer are);
    * ``{"kind": "constant", "value": c}``: a drawn half of the rows (at least one) of every
      float input set to ``c`` along the last dim, the same rows in every input of the same
      leading shape: rows of zero variance for a normalisation (redteam_s8 lr2, eps as a
      first-order correction: NaN there), zero rows for ``c = 0`` (an rms norm of ``x + r`` with
      both zero). ``c = 0`` is the safe choice: a mean of zeros is 0 in any summation order and
      under any division, where a mean of 1.5s moves by an ulp under Triton's approximate float32
      division (times rstd = 316 for eps = 1e-5).

    A ranged scale ``{scale: [low, high]}`` draws its factor per trial (:func:`probe_scale`); a
    ``{"kind": "wrap", "value": k}`` probe changes the integer inputs instead (:func:`apply_wrap`).
    Other inputs (integers, bools, non-tensors) are kept. The reference is run on the
    transformed inputs, so whether the task is invariant decides only how far honest
    computations stay from it, which the probe's tolerance factors say."""
    if probe["kind"] == "wrap":
        return apply_wrap(inputs, probe, gen)
    out = []
    picked: Dict[tuple, torch.Tensor] = {}  # constant rows per leading shape, shared by the inputs
    scale = probe_scale(probe, gen) if probe["kind"] == "scale" else None
    for x in inputs:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
            out.append(x)
            continue
        kind, value = probe["kind"], float(probe["value"] if scale is None else scale)
        rows = tuple(x.shape[:-1]) if x.dim() > 1 else ()
        if kind == "scale":
            y = x.double() * value
        elif kind == "abs":  # rows of one sign (probabilities, attention weights): redteam_s24 cu_v1
            y = x.double().abs() * value
        elif kind == "bits":  # values with ``value`` significant bits (8: upcast bfloat16): redteam_s24 ge_b1
            m, e = torch.frexp(x.double())
            step = 2.0 ** int(value)
            y = torch.ldexp(torch.round(m * step) / step, e)
        elif kind == "shift":
            u = torch.rand(rows + (1,) if x.dim() > 0 else (), generator=gen, device=x.device, dtype=torch.float64)
            y = x.double() + value * (1.0 + u)
        elif kind == "mask":
            n = x.shape[-1] if x.dim() > 0 else 1
            pattern = torch.randint(0, 3, rows + (1,), generator=gen, device=x.device)
            cut = torch.randint(1, max(2, n), rows + (1,), generator=gen, device=x.device)
            j = torch.arange(n, device=x.device)
            masked = torch.where(pattern == 0, torch.rand(rows + (n,), generator=gen, device=x.device) < MASK_FRACTION,
                                 torch.where(pattern == 1, j >= cut, j < cut))
            kept = torch.randint(0, n, rows + (1,), generator=gen, device=x.device)
            masked.scatter_(-1, kept, False)
            y = x.double().reshape(rows + (n,)).masked_fill(masked, value).reshape(x.shape)
        else:  # constant rows
            if rows not in picked:
                pick = torch.rand(rows, generator=gen, device=x.device) < 0.5
                first = torch.randint(0, max(1, pick.numel()), (1,), generator=gen, device=x.device)
                picked[rows] = pick.reshape(-1).index_fill(0, first, True).reshape(rows)
            y = x.double().clone()
            y[picked[rows]] = value
        out.append(y.to(x.dtype))
    return out


def probe_scale(probe: Dict[str, Any], gen: torch.Generator) -> float:
    """The factor of one trial of a ``scale`` probe: its ``value``, or for a ranged probe (``{scale:
    [low, high]}``, normalised with ``"low"``) a factor drawn log-uniformly in ``[low, high]`` from
    ``gen`` (the trial's generator: each listed shape gets its own, and the oracle draws the same).
    A seeded factor leaves no scale or range statistic constant over the verified calls, so a
    branch on one (bfloat16 exps on rows whose range passes 26, redteam_s10 sr2; Newton steps valid
    near unit variance, lw1) meets inputs past its threshold (session 10)."""
    if "low" not in probe:
        return float(probe["value"])
    lo, hi = float(probe["low"]), float(probe["value"])
    u = float(torch.rand((), generator=gen, device=gen.device, dtype=torch.float64))
    return lo * (hi / lo) ** u


def apply_wrap(inputs, probe: Dict[str, Any], gen: torch.Generator) -> list:
    """The inputs of a ``wrap`` probe trial (``{wrap: k}``, VERIFICATION.md rule 24): every integer
    tensor input ``x`` (not bool) becomes ``x + r (max(x) + 1)``, ``r`` an integer uniform in
    ``[-k, k]`` per element drawn from ``gen``; float inputs are kept. For a reference that reduces
    an index (cross_entropy's ``target % V``), values outside the range the inputs are drawn from
    (negative ones and ones past ``V``): a kernel that skips the reduction reads another logit
    (redteam_s10 xt1). Declared only by specs whose reference defines such inputs."""
    k = int(probe["value"])
    out = []
    for x in inputs:
        if not isinstance(x, torch.Tensor) or x.is_floating_point() or x.dtype == torch.bool or x.numel() == 0:
            out.append(x)
            continue
        r = torch.randint(-k, k + 1, x.shape, generator=gen, device=x.device, dtype=x.dtype)
        out.append(x + r * (x.max() + 1))
    return out


#: The fraction of a scattered-mask row's entries a ``mask`` probe sets (:func:`apply_probe`).
MASK_FRACTION = 0.25


def probe_has_precision(probe: Optional[Dict[str, Any]]) -> bool:
    """Whether a trial of ``probe`` (None: an ordinary trial) is held to the precision rule
    (VERIFICATION.md rule 23): every kind but ``mask``, whose -inf entries leave no rounding scale
    (the reference on squared inputs is inf or NaN there; on the H200 the softmax_rows ladder
    recorded a meaningless precision RMS of 605 from that group, session 9), and but a ranged
    ``scale`` (a widening factor drawn per trial), which is held to its tolerance only: on the H200
    the honest softmax_rows v0 float32 (Triton's approximate exp on logits widened 4-16x) measured
    an RMS of 0.256 against a bound of 0.214 set by PyTorch's accurate exp (session 10), while
    the cheat the widening probe exists for (redteam_s10 sr2) leaves the tolerance itself; and but
    ``bits``, whose short-mantissa inputs give honest outputs short mantissas too (GELU's ``x`` for
    large ``x``: the honest float32 gelu_tanh v0 and v1 had 7.7-8.7 % of their outputs with float16's
    mantissa against the rounded reference's 5.3 %, session 24), while the cheat it exists for
    (redteam_s24 ge_b1, bfloat16 arithmetic) leaves the tolerance. Worker and oracle decide alike."""
    return not (probe and (probe["kind"] in ("mask", "bits") or (probe["kind"] == "scale" and "low" in probe)))


def probe_tolerance(tol: Optional[Dict[str, float]], probe: Dict[str, Any]) -> Optional[Dict[str, float]]:
    """The tolerance of a probe trial: ``tol``'s atol and rtol multiplied by the probe's declared
    factors (``probe["atol"]``, ``probe["rtol"]``: how much the output's magnitude and an honest
    computation's relative error grow under the transform). None stays None."""
    if tol is None:
        return None
    return {"atol": tol["atol"] * float(probe.get("atol", 1.0)), "rtol": tol["rtol"] * float(probe.get("rtol", 1.0))}


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


def plant_nonfinite(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A copy of a float tensor ``x`` with +Inf, -Inf and NaN, one each, at a drawn position in the
    first, second and last third of the **last third** of its flat (C-order) index (a region of
    fewer than three elements gets the values whose third is not empty: NaN always; VERIFICATION.md
    rule 8 for ``allclose`` tasks); other inputs are returned as they are. The first two thirds stay
    finite: trial 1 also checks rule 21 (other weights on trial 0's inputs), which a row-wise task's
    NaN rows would hide (redteam_s8 lk1 was accepted while every row of a 3 x 37 input held one).
    The sub-thirds keep the values apart (in different rows of a row-wise task with nine rows or
    more), so a row with +Inf, NaN in every output of a softmax, does not hide the row with the NaN.
    The float64 reference propagates them,
    and rule 6 wants NaN and Inf exactly where it has them (redteam_s10 sx1, a NaN logit read as
    -inf, gave a finite row)."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
        return x
    y = x.clone()
    flat = y.view(-1)
    n = flat.numel()
    start = 2 * n // 3  # the last third only: the rest stays finite for rule 21's other weights (trial 1)
    m = n - start
    for k, value in enumerate((float("inf"), float("-inf"), float("nan"))):
        lo, hi = start + k * m // 3, start + (k + 1) * m // 3
        if hi > lo:
            flat[lo + int(torch.randint(0, hi - lo, (1,), generator=gen, device=y.device))] = value
    return y


def plan_changes(inputs, gen: torch.Generator, region: bool):
    """Where and how to change ``inputs`` in place for the partial-staleness check (VERIFICATION.md
    rule 10): for every tensor input, one element (``region`` False) or a run of consecutive
    elements (``region`` True: 1/64 of the tensor, 2 to 4096 elements) at a position drawn from
    ``gen``. The element gets a value far from its old one (floats: ``-x - 3 sign(x)``, 3 for a
    zero; bools: negated; ints: another value inside the range ``[min, max]`` the tensor already
    holds, so class indices and embedding ids stay valid). A float region gets ``-0.75 x`` (a
    zero: 0.75 times the region's RMS; a non-finite value: 0): every value moves, even functions
    of x see the change, and no value grows, so an honest computation meets inputs no larger than
    the ones it was verified on. (With ``-x - 3 sign(x)`` a whole row of a matmul's x rose from
    about 0.8 to about 3.8 in magnitude, and cuBLAS's bfloat16 GEMM, whose split-K partial sums
    are rounded to bfloat16 -- ``allow_bf16_reduced_precision_reduction``, PyTorch's default --
    left the tolerance on that row: eager matmul_bias_gelu was rejected on the H200, session 10.)
    Returns ``[(input index, flat indices, values)]`` for :func:`apply_changes`; drawing it before
    a timed loop keeps the loop's own work to a copy."""
    changes = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or x.numel() == 0:
            continue
        n = x.numel()
        k = min(n, max(2, min(4096, n // 64))) if region else 1
        start = int(torch.randint(0, n - k + 1, (1,), generator=gen, device=x.device).item())
        idx = torch.arange(start, start + k, device=x.device)
        changes.append((i, idx, _shrunk_opposites(x, idx) if region and x.dtype.is_floating_point
                        else _far_values(x, idx)))
    return changes


def _shrunk_opposites(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """New values for ``x``'s flat float elements ``idx``: ``-0.75`` times the old ones, no larger
    in magnitude (:func:`plan_changes`); a zero becomes 0.75 times the RMS of the region's finite
    values (1 if that is 0), a non-finite value 0. Reads the region only (it runs before timed
    loops too, rule 15: no pass over the whole input)."""
    old = x.reshape(-1)[idx].double()
    finite = torch.isfinite(old)
    rms = float(old[finite].square().mean().sqrt()) if bool(finite.any()) else 0.0
    new = torch.where(old == 0, 0.75 * (rms or 1.0), -0.75 * old)
    return torch.where(finite, new, torch.zeros_like(new)).to(x.dtype)


def _far_values(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """New values for ``x``'s flat elements ``idx``, each far from its old one (floats:
    ``-x - 3 sign(x)``, 3 for a zero, 0 for a non-finite; bools: negated; ints: a step of
    ``1 + span // 2`` inside the range ``[min, max]`` ``x`` holds, wrapping there)."""
    old = x.reshape(-1)[idx]
    if x.dtype == torch.bool:
        return ~old
    if x.dtype.is_floating_point:
        o = old.double()
        new = torch.where(o == 0, 3.0, -o - 3.0 * torch.sign(o)).to(x.dtype)
        return torch.where(torch.isfinite(o), new, torch.zeros_like(new))
    flat = x.reshape(-1)
    lo, hi = int(flat.min()), int(flat.max())
    span = hi - lo + 1
    return (lo + (old.long() - lo + 1 + span // 2) % span).to(x.dtype) if span > 1 else old.clone()


def plan_last(inputs, which: Optional[int] = None):
    """A partial-staleness change of the **last element alone** of a tensor input (a value far
    from it, as :func:`plan_changes` gives): streaming appends land at the end, and a memo keyed on
    all but the tail of the input (tests/adversarial/redteam_s7 fm1: blind to its last 1/16) is
    stale there, where a change of one element plus a region elsewhere reached its key. With
    ``which`` and several tensor inputs, only input number ``which`` (mod their count) changes, the
    others stay as they are: a memo keyed on some of the inputs (redteam_s8 rm1: rmsnorm_residual's
    ``x`` alone, not the residual) is stale when the one it ignores changes alone (the caller
    rotates ``which`` over the shapes). Without ``which``, every tensor input's last element
    changes. Same return form as :func:`plan_changes`."""
    return _plan_alone(inputs, which, last=True)


def plan_first(inputs, which: Optional[int] = None):
    """:func:`plan_last`'s mirror: the **first element alone** of the tensor input(s) changed (a
    memo keyed on all but the head of the input -- tests/adversarial/redteam_s16 c6: blind to its
    first row -- is stale there, and meets no other single-element change but by chance)."""
    return _plan_alone(inputs, which, last=False)


def _plan_alone(inputs, which: Optional[int], last: bool):
    tensors = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.numel() > 0]
    if which is not None and len(tensors) > 1:
        tensors = [tensors[which % len(tensors)]]
    changes = []
    for i in tensors:
        x = inputs[i]
        idx = torch.tensor([x.numel() - 1 if last else 0], device=x.device)
        changes.append((i, idx, _far_values(x, idx)))
    return changes


#: The tolerance-scale change multiplies float inputs by ``1 + NUDGE_RTOLS * rtol`` (rule 10).
NUDGE_RTOLS = 4.0


def plan_nudge(inputs, tol: Optional[Dict[str, float]]):
    """A staleness change at the tolerance's scale (VERIFICATION.md rule 10, ``allclose``): every
    floating tensor input multiplied by ``1 + NUDGE_RTOLS * rtol`` (rounded once to its dtype), so
    an output that scales with the input moves by 4 rtol relative, outside the tolerance wherever
    ``|y| > atol / (3 rtol)``. Every element changes, but each only a little: a memo keyed on
    something coarser than the tolerance (signs, exponents, values rounded to a few bits in
    aggregate; tests/adversarial/redteam_s7 m1's class) returns an answer outside the tolerance
    (tests/test_probes.py). Integer and bool inputs (indices) are kept. ``[]`` without a tolerance
    (``exact``) or with ``rtol == 0``. Same return form as :func:`plan_changes`."""
    if not tol or not tol.get("rtol"):
        return []
    factor = 1.0 + NUDGE_RTOLS * float(tol["rtol"])
    changes = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
            continue
        flat = x.reshape(-1)
        changes.append((i, torch.arange(flat.numel(), device=x.device), (flat.double() * factor).to(x.dtype)))
    return changes


def plan_bump(inputs, tol: Optional[Dict[str, float]]):
    """A staleness change at the **absolute** tolerance's scale (VERIFICATION.md rule 10,
    ``allclose`` with ``atol > 0``): the largest-magnitude finite element of every floating tensor
    input moved away from zero by ``NUDGE_RTOLS * (atol + rtol |x_i|)`` (rounded once to its dtype;
    at least one ulp). An output that sums the input (a scan, a reduction, a convolution's
    identity tap) moves by about that much, outside the tolerance, while a key of the input's top
    bits rarely changes: it is the largest element, moved by a small fraction of itself.
    :func:`plan_nudge` moves every element by ``4 rtol`` relative, which is inside ``atol`` wherever
    ``|y| < atol / (3 rtol)`` (redteam_s24 cu_s2: a cumsum memo keyed on 13 top bits of every
    element kept its key through the nudge, and its stale answer stayed inside atol 3e-3 on every
    CPU shape). Integer and bool inputs are kept; ``[]`` without a tolerance or with ``atol == 0``.
    Same return form as :func:`plan_changes`."""
    if not tol or not tol.get("atol"):
        return []
    atol, rtol = float(tol["atol"]), float(tol.get("rtol") or 0.0)
    changes = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
            continue
        flat = x.reshape(-1).double()
        mag = torch.where(torch.isfinite(flat), flat.abs(), torch.zeros_like(flat))
        j = int(mag.argmax())
        v = float(flat[j])
        sign = -1.0 if v < 0 else 1.0
        moved = torch.tensor([v + sign * NUDGE_RTOLS * (atol + rtol * abs(v))], dtype=torch.float64).to(x.dtype)
        if float(moved) == v:  # below the dtype's spacing there: one ulp away from zero
            moved = torch.nextafter(torch.tensor([v], dtype=x.dtype), torch.tensor([sign * math.inf], dtype=x.dtype))
        changes.append((i, torch.tensor([j], device=x.device), moved.to(x.device)))
    return changes


def plan_permutation(inputs, gen: torch.Generator):
    """A partial-staleness change that keeps every value of the input, only moves some
    (VERIFICATION.md rule 10): for every tensor input of 2+ elements, a run of consecutive
    elements (1/64 of the tensor, 2 to 4096) rotated by one place, and one element swapped with
    the element of the most distant value (so the swap changes something whenever the tensor
    holds two values). Sums, sums of ``|x|``, the maximum and the sorted values all stay as
    they were: a memo keyed on such fingerprints is stale. The values stay in the input's
    domain (indices stay valid). Same return form as :func:`plan_changes`."""
    changes = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or x.numel() < 2:
            continue
        n, flat = x.numel(), x.reshape(-1)
        k = min(n, max(2, min(4096, n // 64)))
        start = int(torch.randint(0, n - k + 1, (1,), generator=gen, device=x.device).item())
        idx = torch.arange(start, start + k, device=x.device)
        vals = flat[idx.roll(1)]
        # one swap outside the run: element a with the element whose value is farthest from it
        outside = torch.cat([torch.arange(0, start, device=x.device), torch.arange(start + k, n, device=x.device)])
        if outside.numel() >= 2:
            a = outside[int(torch.randint(0, outside.numel(), (1,), generator=gen, device=x.device).item())]
            dist = (flat[outside].double() - flat[a].double()).abs().nan_to_num(nan=-1.0)
            b = outside[int(dist.argmax())]
            if int(a) != int(b):
                idx = torch.cat([idx, torch.stack([a, b])])
                vals = torch.cat([vals, torch.stack([flat[b], flat[a]])])
        changes.append((i, idx, vals))
    return changes


def thue_morse(order: int) -> tuple:
    """The Prouhet-Thue-Morse signs of ``order`` k: ``t_j = (-1)^(number of 1 bits of j)`` for
    ``j < 2^k`` (``(1, -1)``, ``(1, -1, -1, 1)``, ``(1, -1, -1, 1, -1, 1, 1, -1)``, ...). Their
    moments ``sum_j t_j j^m`` vanish for every ``m < k`` (Prouhet 1851; E. M. Wright, "Prouhet's
    1851 solution of the Tarry-Escott problem of 1910", Amer. Math. Monthly 66 (1959) 199-201), so
    a change ``d t`` keeps a line's sum and its position moments up to order ``k - 1``."""
    return tuple(-1.0 if bin(j).count("1") % 2 else 1.0 for j in range(2 ** order))


#: The order of :func:`plan_exchange`'s pattern is drawn from the generator in this range
#: (inclusive): the exchange keeps every line's moments ``0 .. k - 1`` along each dim long enough
#: (``2^k`` elements; shorter dims get the largest order that fits), so a memo keyed on moments up
#: to the 2nd (redteam_s9 lm1, rk2) is always stale, one keyed on the 3rd or 4th in a drawn share
#: of runs, and the block's size is not known in advance.
EXCHANGE_ORDERS = (3, 5)
#: At most this many dims carry a factor longer than one, and the block holds at most
#: :data:`EXCHANGE_BLOCK` elements (the largest orders are lowered first to fit).
EXCHANGE_DIMS = 4
EXCHANGE_BLOCK = 4096
#: The block planted in a parameter (VERIFICATION.md rule 21, :class:`kernelsynth.verify.params.PerturbDraws`)
#: holds at most this many elements: its trial must also meet prepared weights keyed on a few
#: sampled weights (tests/adversarial/cpu/params/sampled_weights.py, redteam_2026_12_01 k3: every
#: 97th weight), which a larger block reaches more often. A 1-D weight still gets order 5 (32).
PARAM_EXCHANGE_BLOCK = 32


def exchange_orders(shape, order: int, max_block: int = EXCHANGE_BLOCK) -> list:
    """The order of :func:`plan_exchange`'s factor along each dim of a tensor of ``shape`` for the
    drawn ``order``: ``min(order, floor(log2(n)))`` on the last :data:`EXCHANGE_DIMS` dims of
    length 2 or more (0 elsewhere: factor ``(1,)``), the largest lowered first until the block
    (the product of the ``2^order`` lengths) holds at most ``max_block`` elements (a power of two;
    :data:`EXCHANGE_BLOCK` for inputs, :data:`PARAM_EXCHANGE_BLOCK` for parameters)."""
    orders = [0] * len(shape)
    for d in [d for d in range(len(shape)) if shape[d] >= 2][-EXCHANGE_DIMS:]:
        orders[d] = min(order, int(shape[d]).bit_length() - 1)
    while sum(orders) > max(1, max_block.bit_length() - 1):
        orders[max(range(len(orders)), key=lambda d: orders[d])] -= 1
    return orders


def plan_exchange(inputs, gen: torch.Generator, which: Optional[int] = None, max_block: int = EXCHANGE_BLOCK):
    """A staleness change that keeps the **low moments of every line** of the input and its
    values (VERIFICATION.md rule 10; tests/adversarial/redteam_s8 mm1, an incremental memo that
    keeps per-row and per-column checksums ``(sum_k x_k, sum_k (k+1) x_k)`` and recomputes only
    the lines whose checksum moved; redteam_s9 lm1/sm1/rk2, the same keyed on second moments or
    per column). For one tensor input (number ``which`` mod their count, as :func:`plan_last`;
    the first without ``which``; nothing when that one has a single element) an order ``k`` is
    drawn from ``gen`` in :data:`EXCHANGE_ORDERS` and a block at a seeded place gets, along each
    dim, the Prouhet-Thue-Morse signs of the order :func:`exchange_orders` gives it
    (:func:`thue_morse`: ``2^k`` long on a dim of ``2^k`` or more; ``(1, -1)`` on a dim of 2 or
    3; ``(1,)`` on a dim of 1); their product ``P`` is +-1; the block never holds the tensor's
    last element (rule 10's last-element step comes between the plant and the exchange; nothing
    when the block would fill the tensor; at most ``max_block`` elements). The block first holds ``a`` where ``P = 1`` and ``b``
    where ``P = -1`` (the *plant*, written with the full overwrite before it, rule 10's first
    change), then ``a`` and ``b`` trade places. The change ``(b - a) P`` is exact (values only
    move) and has, along every dim, zero sum on every line through the block and, along a dim of
    order ``k_d``, zero position moments up to order ``k_d - 1`` -- so do the flat-index moments up
    to the smallest order -- and the tensor keeps its values (sums of any function of them, sorted
    values, histogram). ``a`` and ``b`` are the tensor's own values near its 25th and 75th
    percentiles (of 1024 seeded samples; its minimum and maximum when those agree), so extrema,
    their positions and an integer input's domain are kept too.

    Returns ``(plant, exchange)``, each in :func:`plan_changes`' form (``[]`` when no tensor
    input has two distinct values or two elements)."""
    tensors = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.numel() > 0]
    if not tensors or inputs[tensors[(which or 0) % len(tensors)]].numel() < 2:
        return [], []
    i = tensors[(which or 0) % len(tensors)]
    x = inputs[i]
    dev, flat = x.device, x.reshape(-1)
    order = int(torch.randint(EXCHANGE_ORDERS[0], EXCHANGE_ORDERS[1] + 1, (1,), generator=gen, device=dev).item())
    orders = exchange_orders(tuple(x.shape), order, max_block)
    lengths = [2 ** o for o in orders]
    starts = [int(torch.randint(0, n - k + 1, (1,), generator=gen, device=dev).item())
              for n, k in zip(x.shape, lengths)]
    if all(st + k == n for st, k, n in zip(starts, lengths, x.shape)):  # keep the last element out of the
        room = [d for d in range(x.dim()) if x.shape[d] > lengths[d]]   # block: the last-element step
        if not room:                                                    # runs between plant and exchange
            return [], []
        starts[room[-1]] -= 1
    idx = torch.zeros((), dtype=torch.long, device=dev)
    pattern = torch.ones((), dtype=torch.float64, device=dev)
    stride = 1
    for d in reversed(range(x.dim())):  # logical row-major flat indices (apply_changes' order)
        ar = torch.arange(starts[d], starts[d] + lengths[d], device=dev)
        idx = (ar.view((-1,) + (1,) * idx.dim()) * stride + idx)
        pattern = torch.tensor(thue_morse(orders[d]), dtype=torch.float64, device=dev).view(
            (-1,) + (1,) * pattern.dim()) * pattern
        stride *= x.shape[d]
    idx, pos = idx.reshape(-1), pattern.reshape(-1) > 0
    sample = flat[torch.randint(0, flat.numel(), (1024,), generator=gen, device=dev)]
    if x.is_floating_point():
        sample = sample[torch.isfinite(sample)]
    if sample.numel() == 0:
        return [], []
    ordered = sample.sort().values
    a, b = ordered[ordered.numel() // 4], ordered[(3 * ordered.numel()) // 4]
    if bool(a == b):
        a, b = ordered[0], ordered[-1]
    if bool(a == b):
        return [], []
    ones = torch.ones(idx.numel(), dtype=x.dtype, device=dev)
    first, second = torch.where(pos, a * ones, b * ones), torch.where(pos, b * ones, a * ones)
    return [(i, idx, first)], [(i, idx, second)]


def exchange_extra(shapes) -> Optional[int]:
    """The index of an even listed shape that also gets the block exchange (VERIFICATION.md rule
    10), or None. The exchange runs on the odd listed shapes; when none of them has every dim of
    at least ``2^EXCHANGE_ORDERS[0]`` (8), a memo keyed per line along a short dim meets only a
    short pattern there (redteam_s9 sm1: column checksums where the odd CPU shapes of softmax_rows
    are 3x37 and 2x4099, whose columns of 2-3 elements get ``(1, -1)``, which moves a weighted
    sum). Then the even shape whose smallest dim is largest gets it too, if that dim exceeds every
    odd shape's smallest dim (one more call there). ``shapes``: the listed shapes (dicts)."""
    def smallest(s):
        return min(list(s.values()) or [0])
    odd = [smallest(s) for s in shapes[1::2]]
    if odd and max(odd) >= 2 ** EXCHANGE_ORDERS[0]:
        return None
    even = [(smallest(s), si) for si, s in enumerate(shapes) if si % 2 == 0]
    if not even:
        return None
    best, si = max(even, key=lambda e: (e[0], -e[1]))
    return si if best > max(odd or [0]) and best >= 4 else None


#: Positions and values of :func:`plan_rolling` per input: coprime cycle lengths, so the input's
#: state (the last value written at each position) does not repeat within 64 x 8191 calls.
ROLLING_POSITIONS, ROLLING_VALUES = 64, 8191


def plan_rolling(inputs, gen: torch.Generator):
    """The change made before every timed call (VERIFICATION.md rule 15): for every tensor input,
    :data:`ROLLING_POSITIONS` flat positions and :data:`ROLLING_VALUES` values drawn from ``gen``,
    the values taken from the tensor itself (in its domain: indices stay valid). Before timed call
    ``k`` one element, position ``k mod 64``, gets value ``k mod 8191``
    (:func:`apply_rolling`): no two timed calls see the same input, so an answer memoised on the
    whole input (however it is compared or hashed) is never a hit, at the cost of one tiny write
    outside the timed region. Returns ``[(input index, positions, values)]``."""
    plan = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or x.numel() == 0:
            continue
        n = x.numel()
        pos = torch.randint(0, n, (ROLLING_POSITIONS,), generator=gen, device=x.device)
        src = torch.randint(0, n, (ROLLING_VALUES,), generator=gen, device=x.device)
        plan.append((i, pos, x.reshape(-1)[src].clone()))
    return plan


def apply_rolling(inputs, plan, k: int) -> None:
    """Write change ``k`` of :func:`plan_rolling` into ``inputs`` (through ``Tensor.data``, as
    :func:`apply_changes`)."""
    apply_changes(inputs, [(i, pos[k % pos.numel():k % pos.numel() + 1], vals[k % vals.numel():k % vals.numel() + 1])
                           for i, pos, vals in plan])


def apply_changes(inputs, changes) -> None:
    """Write the values of :func:`plan_changes` or :func:`plan_permutation` into ``inputs`` in
    place, through ``Tensor.data``: the write does not bump the input's version counter
    (``x._version``), so a memo keyed on the data pointer and the version is stale (contiguous
    tensors; others through a reshaped copy written back the same way)."""
    for i, idx, vals in changes:
        x = inputs[i].data  # shares the storage, not the version counter
        if x.is_contiguous():
            x.view(-1)[idx] = vals
        else:
            flat = x.reshape(-1).clone()
            flat[idx] = vals
            x.copy_(flat.view(x.shape))
