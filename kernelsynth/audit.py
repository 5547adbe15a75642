"""The independent check: a candidate's outputs against references computed in a process that
never imported the candidate (references/VERIFICATION.md, rule 18).

Every other rule runs in the worker that imported the candidate, and Python there can reach
anything: the harness's locals through the call stack, its functions, the reference module,
torch's dispatcher. So for every trial of every shape, the worker also sends the raw output
(:func:`kernelsynth.verify.transport.digest`, taken right after the call) to the parent. A trusted job,
:func:`kernelsynth.jobs.oracle`, run before any candidate in a worker that never imports one,
rebuilds the same inputs from the same seeds (:func:`kernelsynth.verify.inputs.trial_inputs`) and
returns the reference outputs. The parent (which never runs CUDA) compares them here. A candidate
whose in-process verification passed but whose outputs fail here interfered with the harness,
and is rejected with fault ``audit``; one that sends no output for an expected shape also fails.

Imported by the parent. Importing it does not import torch (:func:`expected_keys` plans without
it); :func:`audit_problem` imports torch and :mod:`kernelsynth.verify.comparison` when called, on
CPU tensors only.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .verify.failures import VerificationFailure
from .verify.transport import FRESH_GROUP, LISTED_POOL, audit_key, tensor_of


def special_values_of(request):
    """What trial 1 of each listed shape of an evaluate request plants in its inputs (VERIFICATION.md
    rule 8): True (every special value: ``exact``), ``"nonfinite"`` (NaN and +-Inf: ``allclose`` with
    ``request.nonfinite``) or False. The worker and the oracle plan alike."""
    if request.comparison == "exact":
        return True
    return "nonfinite" if getattr(request, "nonfinite", False) else False


def expected_keys(request) -> Dict[str, tuple]:
    """``{"<group>:<shape index>:<trial>": (shape, trial, special_values)}`` audited for one evaluate
    request (a :class:`kernelsynth.contract.JobRequest`): every trial of every listed shape, the
    input-range probes' trial on every listed shape (group ``probe<k>``, rule 24), of each derived
    shape (one trial) and of the timing shape, and on every listed shape the staleness check's
    first call on its overwritten input (group :data:`~kernelsynth.verify.transport.FRESH_GROUP`,
    trial 0's models; rule 23 meters it in the worker: session 28). (Auditing only the last trial let a
    candidate be wrong on the others.) The staleness check's later calls (group
    :data:`~kernelsynth.verify.transport.LATER_GROUP`) are not planned here: their number depends on the
    inputs (:func:`kernelsynth.verify.protocol.later_steps`), so the oracle adds their keys as it replays
    each fresh key's steps, and the parent audits the keys the oracle made."""
    keys: Dict[str, tuple] = {}
    special = special_values_of(request)
    groups = [("listed", request.verify_shapes, request.trials, special)]
    groups += [(f"probe{k}", request.verify_shapes, 1, False) for k in range(len(getattr(request, "probes", None) or []))]
    groups.append(("derived", request.derived_shapes or [], 1, False))
    if request.timing_shape and request.time:
        groups.append(("timing", [request.timing_shape], request.timing_shape_trials, False))
    for group, shapes, trials, sv in groups:
        for si, shape in enumerate(shapes):
            for t in range(trials):
                keys[audit_key(group, si, t)] = (shape, t, sv)
    for si, shape in enumerate(request.verify_shapes):  # the staleness check's call on an overwritten input
        keys[audit_key(FRESH_GROUP, si, 0)] = (shape, 0, special)
    return keys


def audit_problem(got: Optional[Dict[str, Any]], references: Dict[str, Dict[str, Any]], comparison: str,
                  tol: Optional[Dict[str, float]], precision: Optional[str] = None) -> Optional[str]:
    """:func:`_audit_problem`, and a failure of the check when ``got`` (the worker's, so the
    candidate's to write) cannot be read: a digest without its ``shape`` raised KeyError in the
    parent, which ended the run (tests/adversarial/sandbox_s8 audit_malformed)."""
    try:
        return _audit_problem(got, references, comparison, tol, precision)
    except Exception as e:  # noqa: BLE001 - whatever a forged record makes the comparison raise
        return f"the worker's audit record does not check: {type(e).__name__}: {e}"[:500]


def _audit_problem(got: Optional[Dict[str, Any]], references: Dict[str, Dict[str, Any]], comparison: str,
                   tol: Optional[Dict[str, float]], precision: Optional[str] = None) -> Optional[str]:
    """Why the candidate's outputs ``got`` (``{key: digest}`` from the worker) disagree with the
    independent ``references`` (``{key: {"where", "digest"}}`` from :func:`kernelsynth.jobs.oracle`;
    for ``allclose`` also ``"dtype"``, the reference's output dtype at the dtype under test, and
    with a precision policy ``"scale"`` and ``"honest"``), or None when every key agrees: bit for
    bit (``exact``; whole tensors or checksums) or within ``tol`` against the float64 reference
    and with the reference's dtype (``allclose``), by :func:`kernelsynth.verify.comparison.compare`;
    then the precision rule for ``precision`` (VERIFICATION.md rule 23) on every shape group, pooled
    over its trials as the worker pools them, and on the pool of the groups too small to be judged
    alone (:meth:`~kernelsynth.verify.precision.PrecisionMeter.pooled`)."""
    from .verify.comparison import _bits, autograd_mismatch, compare  # imports torch
    from .verify.precision import ACCUMULATION, PrecisionMeter, trial_sums

    got = got if isinstance(got, dict) else {}
    meters: Dict[str, Any] = {}
    for key, ref in references.items():
        where, r = ref["where"], ref["digest"]
        d = got.get(key)
        if not isinstance(d, dict):
            return f"{where}: no output was recorded for it (the verification did not run as planned)"
        if d.get("type") != "torch.Tensor":
            return f"{where}: output is {d.get('type')}, expected exactly torch.Tensor"
        if d.get("shadowed"):  # as the worker's rule 3 (comparison.shadowed_attributes)
            return (f"{where}: the output's own attributes {', '.join(map(str, d['shadowed'][:6]))} shadow "
                    "torch.Tensor's (layout rule)")
        if list(d["shape"]) != list(r["shape"]):
            return f"{where}: output shape {tuple(d['shape'])}, expected {tuple(r['shape'])}"
        autograd = autograd_mismatch(bool(d.get("requires_grad", False)), bool(d.get("grad_fn", False)),
                                     bool(r.get("requires_grad", False)), bool(r.get("grad_fn", False)))
        if autograd:  # the output's autograd state, as the worker's rule 3 (comparison.layout_mismatch)
            return f"{where}: {autograd}"
        if comparison == "exact":
            if d["dtype"] != r["dtype"]:
                return f"{where}: output dtype {d['dtype']}, expected {r['dtype']}"
            if "checksum" in r or "checksum" in d:
                if d.get("checksum") != r.get("checksum"):
                    return f"{where}: not bit-exact (checksums of the whole output differ)"
                continue
            a, b = tensor_of(d), tensor_of(r)
            bad = _bits(a) != _bits(b)
            if bool(bad.any()):
                i = tuple(int(v) for v in bad.nonzero()[0])
                return (f"{where}: not bit-exact: {int(bad.sum())} of {bad.numel()} elements differ; "
                        f"first at {i}: got {a[i].item()!r}, expected {b[i].item()!r}")
            continue
        if "dtype" in ref and d["dtype"] != ref["dtype"]:
            return f"{where}: output dtype {d['dtype']}, expected {ref['dtype']} (the reference's at the dtype under test)"
        out, r64 = tensor_of(d), tensor_of(r)
        try:  # a probe's key carries its own tolerance (the spec's times the probe's factors)
            compare(out, r64, comparison, ref.get("tol") or tol, out.dtype)  # the dtype was checked above
        except VerificationFailure as e:
            return f"{where}: {e}"
        if precision and "scale" in ref:
            group = key.split(":")[0]  # the staleness check's calls pool with the listed shapes, as in the worker
            meter = meters.setdefault("listed" if group in LISTED_POOL else group, PrecisionMeter(precision))
            low = ref.get("honest_low")  # the oracle's: where an honest output is in the lower format too
            sums = trial_sums(out, r64, tensor_of(ref["scale"]), threshold=ref.get("threshold"),
                              relative=ref.get("rel_threshold"), slack=ref.get("acc_slack", ACCUMULATION),
                              linear=bool(ref.get("linear")),
                              low_exclude=tensor_of(low).reshape(out.shape).bool() if low else None)
            meter.add_sums(sums["candidate"], ref["honest"], sums if "threshold" in ref else None, ref,
                           slack=ref.get("slack"))
    pool = PrecisionMeter.pooled(list(meters.values()))  # groups under MIN_ELEMENTS, pooled as the worker pools them
    checks = [(f"{group} shapes", meter) for group, meter in meters.items()]
    for where, meter in checks + ([("pooled small groups", pool)] if pool is not None else []):
        try:
            meter.check(where)
        except VerificationFailure as e:
            return str(e)
    return None
