"""The trial driver (VERIFICATION.md rules 1-12, 23): every shape x trial, in order, under one
:class:`VerifyPolicy`. Runs in a worker."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from .comparison import (_S, _T, _bits, check_earlier_output, check_inputs_untouched, compare, outputs_agree,
                         run_reference)
from .failures import VerificationFailure
from .guard import check_integrity, check_no_new_threads, thread_ids
from .inputs import (NUDGE_RTOLS, probe_has_precision, apply_changes, exchange_extra, plan_bump, plan_changes, plan_exchange, plan_first, plan_last, plan_nudge, plan_permutation,
                     probe_tolerance, shape_label,
                     trial_inputs)
from .poison import call_poisoned
from .refmemo import output_hash, output_hashes
from .precision import MIN_ELEMENTS, POOL_PER_TRIAL, HonestReferences, PrecisionMeter, accumulation_slack
from .transport import FRESH_GROUP, LATER_GROUP, audit_key, digest


@dataclass(frozen=True)
class VerifyPolicy:
    """How one job's candidate is verified: where, from which seed, and by which rules.

    ``dtype``/``device``: the job's. ``seed``: the run seed the trial inputs derive from.
    ``comparison``: ``"exact"`` or ``"allclose"``; ``tol``: ``{"atol", "rtol"}`` (``allclose``).
    ``determinism_tol``: the spec's bound for repeat calls (None: bitwise). ``poison_empty``:
    fill uninitialised allocations (off for trusted baselines: torch.compile traces the mode).
    ``check_threads``: fail a candidate whose thread outlives a call (off for trusted baselines:
    torch.compile keeps worker threads); ``threads_before``: :func:`~kernelsynth.verify.guard.thread_ids`
    taken before the candidate was imported (None: at the start of each :func:`verify`).
    ``guard``: an :func:`~kernelsynth.verify.guard.integrity_snapshot` taken before the import,
    checked after every trial (TamperingError). ``audit``: a dict that receives
    ``{audit_key(group, shape index, trial): digest(output)}`` for every trial, taken right after
    the call (:mod:`kernelsynth.audit`); None: nothing is recorded. ``settle_s``: seconds of the
    pause before the last trial of every shape is compared again (work that lands after the checks).
    ``census``: a set that receives the name of every operator the candidate's verified calls
    dispatch (:mod:`~kernelsynth.verify.census`; with ``poison_empty`` only); None: not recorded.
    ``precision``: the task's precision policy for this dtype (``allclose``;
    :data:`~kernelsynth.verify.precision.POLICIES`), None: no precision rule.
    ``reduction``: ``shape -> n``, the reduction length of one output at a shape (the spec's
    ``reduction`` formula; None: the shape's largest dim), for the precision rule's accumulation
    slack (:func:`~kernelsynth.verify.precision.accumulation_slack`). ``memo``: the worker's
    :class:`~kernelsynth.verify.refmemo.ReferenceMemo` of reference outputs (None: every reference
    is computed).
    """

    dtype: torch.dtype
    device: torch.device
    seed: int
    comparison: str
    tol: Optional[Dict[str, float]] = None
    determinism_tol: Optional[Dict[str, float]] = None
    poison_empty: bool = True
    check_threads: bool = True
    guard: Optional[Dict[str, int]] = None
    threads_before: Optional[frozenset] = None
    audit: Optional[Dict[str, Any]] = None
    settle_s: float = 0.05
    census: Optional[set] = None
    precision: Optional[str] = None
    reduction: Optional[Callable[[Dict[str, int]], float]] = None
    memo: Optional[Any] = None

    def slack(self, shape: Dict[str, int], factor: float = 1.0) -> float:
        """The precision rule's accumulation slack at ``shape`` (times ``factor``: a probe's rtol factor)."""
        n = self.reduction(shape) if self.reduction is not None else max(list(shape.values()) or [1])
        return accumulation_slack(self.precision, n) * factor


@dataclass
class VerificationReport:
    """What one :func:`verify` call measured. ``out_dtype``: the reference's output dtype at the
    dtype under test (the one every output had). ``precision``: the precision rule's
    ``{"rms", "honest_rms", "bound"}`` (:class:`~kernelsynth.verify.precision.PrecisionMeter`)."""

    trials: int = 0
    shapes: List[str] = field(default_factory=list)
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    out_dtype: Optional[torch.dtype] = None
    #: the strides of the reference's output at the dtype under test, per shape label (``allclose``:
    #: a layout accepted besides the float64 reference's, :func:`~kernelsynth.verify.comparison.layout_mismatch`)
    out_strides: Dict[str, Optional[tuple]] = field(default_factory=dict)
    precision: Dict[str, Optional[float]] = field(default_factory=dict)
    #: ``(where, output, reference, dtype, tol, strides)`` of each shape's last trial (:func:`recheck_after_settling`)
    retained: List[tuple] = field(default_factory=list)
    #: the group's pooled precision sums (a group under MIN_ELEMENTS joins the job's pool of small
    #: groups: :func:`check_small_groups`)
    meter: Optional[PrecisionMeter] = None


def verify(candidate: Callable, ref_model: torch.nn.Module, get_inputs: Callable,
           shapes: Sequence[Dict[str, int]], policy: VerifyPolicy, *, trials: int, determinism: bool = True,
           special_values: bool = False, models_for: Optional[Callable] = None,
           group: str = "listed", settle: bool = True, probe: Optional[Dict[str, Any]] = None) -> VerificationReport:
    """Run the protocol on every shape x trial. Raises VerificationFailure at the first failure,
    with the shape and trial named; returns the report when everything passed.

    ``shapes``: dicts of named dims, passed to ``get_inputs(shape, dtype, device, generator)``.
    ``special_values``: trial 1 of each shape gets NaN, +-Inf, -0.0 and huge values (floats) or
    the dtype's extremes (ints) planted in its inputs. ``determinism``: check repeat calls on the
    first trial of each shape (:func:`check_repeat_and_fresh`).
    ``models_for(shape, group, si, t) -> (candidate, ref_model)``: the models of trial ``t`` of
    shape number ``si`` (parameters are inputs: the worker builds both from a fresh seed per trial,
    VERIFICATION.md rule 21); replaces ``candidate`` and ``ref_model`` when given.
    ``group``: the first part of the audit keys (``listed``, ``derived``, ``timing``).
    ``settle``: end with :func:`recheck_after_settling` of the retained outputs; a caller that
    runs several groups may pass False and recheck every group's ``report.retained`` once.
    ``probe``: an input-range probe of the spec (VERIFICATION.md rule 24; a normalised entry of
    ``probes:``): every trial's inputs are trial 0's transformed by
    :func:`~kernelsynth.verify.inputs.apply_probe`, compared with the reference on them under the
    tolerance times the probe's factors (:func:`~kernelsynth.verify.inputs.probe_tolerance`) and
    held to the precision rule with the accumulation slack times its rtol factor. On every second
    shape (even index) the probe's module is first called on trial 0's untransformed inputs (its
    output compared too, under the looser of the ordinary and the probe's tolerance, bound by
    bound), so the probe is a *later* call of a module
    that has seen ordinary inputs: a candidate that calibrates a lower precision on its first call
    (float16 scales from the first inputs' amax: tests/adversarial/redteam_s8 mc1) meets inputs
    2^17 times larger than those it calibrated on."""
    report = VerificationReport()
    threads_before = None
    if policy.check_threads:
        threads_before = policy.threads_before if policy.threads_before is not None else thread_ids()
    retained = []  # (where, output, reference, dtype, tol, strides) of each shape's last trial, compared again at the end
    comparison, device = policy.comparison, policy.device
    tol = probe_tolerance(policy.tol, probe) if probe else policy.tol
    warm_tol = {k: max(tol[k], policy.tol[k]) for k in tol} if tol and policy.tol else tol
    slack_factor = float(probe.get("rtol", 1.0)) if probe else 1.0
    honest = HonestReferences(policy.precision, policy.dtype) if comparison == "allclose" else None
    meter = PrecisionMeter(policy.precision if comparison == "allclose" else None)
    extra = exchange_extra(list(shapes)) if determinism else None  # an even shape that gets the exchange too
    for si, shape in enumerate(shapes):
        label = shape_label(shape)
        report.shapes.append(label)
        earlier = None  # (output, snapshot of its bits) of this shape's previous trial
        kept = []  # (where, output, fingerprint) of every trial's outputs: checked again after the shape's calls
        for t in range(trials):
            if models_for is not None:
                candidate, ref_model = models_for(shape, group, si, t)
            warm = None
            if probe and si % 2 == 0:  # the probe as a later call: the module first sees ordinary inputs
                plain, _ = trial_inputs(get_inputs, shape, si, t, policy.seed, policy.dtype, device, False)
                plain_copy = [x.clone() for x in plain]
                try:
                    warm = (call_poisoned(candidate, plain, device, policy.poison_empty, threads_before, policy.census),
                            run_reference(ref_model, plain_copy, comparison, policy.dtype, policy.memo))
                except VerificationFailure as e:
                    raise VerificationFailure(f"shape {label}, trial {t} (the call on ordinary inputs before the "
                                              f"input-range probe): {e}") from None
                del plain, plain_copy
            inputs, gen = trial_inputs(get_inputs, shape, si, t, policy.seed, policy.dtype, device, special_values,
                                       probe)
            pristine = [x.clone() for x in inputs]
            where = f"shape {label}, trial {t}" + (f" (input-range probe: {probe['kind']} "
                                                   + (f"{probe['low']:g}-" if "low" in probe else "")
                                                   + f"{probe['value']:g})" if probe else "")
            try:
                out = call_poisoned(candidate, inputs, device, policy.poison_empty, threads_before, policy.census)
                if policy.audit is not None:  # every trial, for the independent check (kernelsynth/audit.py)
                    policy.audit[audit_key(group, si, t)] = digest(out, comparison)
                check_earlier_output(earlier, out)
                check_inputs_untouched(inputs, pristine, out)
                with policy.memo.holding(pristine) if policy.memo is not None else contextlib.nullcontext():
                    ref = run_reference(ref_model, pristine, comparison, policy.dtype, policy.memo)  # one fingerprint
                    terms = honest.terms(ref_model, pristine, ref, policy.memo) if honest is not None else {"dtype": ref.dtype}
                report.out_dtype = terms["dtype"]
                strides = report.out_strides[label] = terms.get("strides")
                errs = compare(out, ref, comparison, tol, terms["dtype"], strides)
                # as checked: before any later call. The shape's last call needs no fingerprint (no call of
                # the candidate comes between it and check_kept_outputs; its output is retained for the
                # settle re-check, which covers the later shapes' calls): on the one-call shapes (derived,
                # timing) this skips hashing outputs of up to 2^31 elements (about 50 int64 passes each)
                more = t < trials - 1 or (determinism and t == 0)
                kept.append((where, out, output_fingerprint(out) if more else None))
                if warm is not None:
                    try:
                        # ordinary inputs, but the probe's module: its parameters are scaled too under
                        # `params: true` (conv's 2^17 makes these outputs 2^17 larger), so the looser
                        # of the two tolerances, each bound apart (a shrinking probe's atol x 2^-20
                        # rejected honest TF32 attention here, session 27)
                        compare(warm[0], warm[1], comparison, warm_tol, terms["dtype"], strides)
                    except VerificationFailure as e:
                        raise VerificationFailure(f"the call on ordinary inputs before the probe: {e}") from None
                    warm = None
                if probe_has_precision(probe) and not (special_values == "nonfinite" and t == 1):  # rule 8's NaN/Inf
                    meter.add(out, ref, terms, slack=policy.slack(shape, slack_factor))
                if determinism and t == 0:
                    metered = None
                    if honest is not None and probe_has_precision(probe):
                        def metered(o, ins, r, _m=ref_model, _s=shape):  # rule 23 on a call with a tensor seen before
                            with policy.memo.holding(ins) if policy.memo is not None else contextlib.nullcontext():
                                t2 = honest.terms(_m, ins, r, policy.memo)
                            meter.add(o, r, t2, slack=policy.slack(_s, slack_factor))
                    latest = check_repeat_and_fresh(candidate, ref_model, get_inputs, shape, pristine, out, ref, gen,
                                                    policy, threads_before, out_dtype=terms["dtype"], out_strides=strides,
                                                    last_only=si % 2 == 1, nudge=si % 2 == 0, which=si // 2,
                                                    exchange=si == extra, rounds=len(shapes) // 2, metered=metered,
                                                    audit_shape=si if group == "listed" else None)
                else:
                    latest = out
                if t == trials - 1:
                    retained.append((where, out, ref, terms["dtype"], tol, strides))
                elif type(latest) is torch.Tensor:
                    earlier = (latest, latest.detach().clone())
                if latest is not out:
                    kept.append((where, latest, output_fingerprint(latest) if t < trials - 1 else None))
            except VerificationFailure as e:
                raise VerificationFailure(f"{where}: {e}") from None
            if policy.guard is not None:
                check_integrity(policy.guard)
            report.trials += 1
            report.max_abs_err = max(report.max_abs_err, errs["max_abs_err"])
            report.max_rel_err = max(report.max_rel_err, errs["max_rel_err"])
        check_kept_outputs(kept)
        del kept
    report.precision = meter.check(f"{group} shapes {', '.join(report.shapes)} ({report.trials} trials)")
    report.meter = meter
    report.retained = retained
    if settle:
        recheck_after_settling(retained, comparison, tol, device, threads_before, policy.settle_s)
    return report


def check_small_groups(reports: Sequence[VerificationReport]) -> Optional[VerificationReport]:
    """The precision rule (VERIFICATION.md rule 23) on the pool of the ``reports``' groups that
    measured fewer than :data:`~kernelsynth.verify.precision.MIN_ELEMENTS` elements and few per
    trial (:meth:`~kernelsynth.verify.precision.PrecisionMeter.pooled`): a report of group ``pooled``
    with its statistics, or None when there is no such group. Raises VerificationFailure when the
    pool fails the rule (cross_entropy's one loss per trial: redteam_s8 cp1)."""
    pool = PrecisionMeter.pooled([r.meter for r in reports])
    if pool is None:
        return None
    names = [s for r in reports if r.meter is not None and 0 < r.meter.candidate[1] < MIN_ELEMENTS
             and r.meter.candidate[1] <= POOL_PER_TRIAL * max(1, r.meter.trials) for s in r.shapes]
    rep = VerificationReport(shapes=names, meter=pool)
    rep.precision = pool.check(f"pooled small groups (shapes {', '.join(names)}; {pool.candidate[1]} elements)")
    return rep


def output_fingerprint(out) -> Optional[torch.Tensor]:
    """A device fingerprint of ``out``'s bits (:func:`~kernelsynth.verify.refmemo.output_hash`, read
    through the C ``detach``: a fresh object, whatever attributes ``out`` gained), or None for an
    output that is not exactly a tensor, is empty or has a dtype the hash cannot read."""
    if type(out) is not torch.Tensor or not _T.numel(out):
        return None
    return output_hash(_T.detach(out))


def check_kept_outputs(kept) -> None:
    """Every output a shape's trials returned (the harness held them all: ``(where, output,
    fingerprint)``), once the shape's calls are over: its bits must be those it had when its trial
    was checked, and its CPU storage not shared memory. A candidate that writes into outputs its
    caller still holds, calls later -- through a weak reference that keeps nothing alive for the
    release check, or a second mapping of memory it made shared after the return -- fails
    (tests/adversarial/redteam_s16b m1, m2; the checks before compared one call back). One device
    synchronisation for the shape. An entry whose fingerprint is None (the shape's last call, which
    :func:`verify` does not fingerprint: no call comes after it) gets the shared-memory check only."""
    for where, out, _ in kept:
        if type(out) is torch.Tensor and out.device.type == "cpu" and _S.is_shared(_T.untyped_storage(out)):
            raise VerificationFailure(f"{where}: the output was moved to shared memory after it was returned "
                                      "(a later call of the candidate; VERIFICATION.md rule 10)")
    pairs = [(where, out, fp) for where, out, fp in kept if fp is not None]
    if not pairs:
        return
    # the fingerprints now, those of one element count hashed together (output_hashes: the same sums)
    now = output_hashes([_T.detach(out) if type(out) is torch.Tensor and _T.numel(out) else None  # output_fingerprint's
                         for _, out, _ in pairs])
    before = [fp for _, _, fp in pairs]
    if all(a is not None and a.shape == b.shape == (2,) and a.device == b.device == before[0].device
           for a, b in zip(now, before)):
        same = (torch.stack(now) == torch.stack(before)).all(1).tolist()
    else:
        same = torch.stack([(a == b).all() if a is not None and a.shape == b.shape else
                            torch.zeros((), dtype=torch.bool, device=b.device) for a, b in zip(now, before)]).tolist()
    for ok, (where, _, _) in zip(same, pairs):
        if not ok:
            raise VerificationFailure(f"{where}: the output changed after it was checked: a later call of the "
                                      "candidate wrote into an output its caller still held (VERIFICATION.md rule 10)")


def recheck_after_settling(retained, comparison, tol, device, threads_before, settle_s) -> None:
    """Pause ``settle_s``, synchronise, and compare every retained output with its reference again:
    an output changed by work that landed after its checks (a thread, a stream, a delayed copy)
    fails. Also fails when a thread the candidate started is still alive. ``retained``: the
    ``(where, output, reference, dtype, tol, strides)`` entries of :attr:`VerificationReport.retained`;
    an entry's own tolerance (a probe's) is used, ``tol`` where it is None, and its strides (the
    reference's at the dtype under test) are accepted as :func:`verify`'s comparison accepted them."""
    if not retained:
        return
    time.sleep(settle_s)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    if threads_before is not None:
        check_no_new_threads(threads_before)
    for where, out, ref, dtype, own_tol, strides in retained:
        try:
            compare(out, ref, comparison, tol if own_tol is None else own_tol, dtype, strides)
        except VerificationFailure as e:
            raise VerificationFailure(f"{where}: the output changed after it was checked (work that lands "
                                      f"after the call returned): {e}") from None


def refresh_inputs(inputs: list, get_inputs: Callable, shape: Dict[str, int], dtype: torch.dtype,
                   device: torch.device, gen: torch.Generator, which: Optional[int], plant: bool) -> list:
    """Step 2 of :func:`check_repeat_and_fresh`: overwrite the tensors of ``inputs`` in place with
    fresh values drawn from ``gen`` (the trial's generator, after :func:`~kernelsynth.verify.inputs.trial_inputs`),
    then, with ``plant``, plant the block that step 4 exchanges
    (:func:`~kernelsynth.verify.inputs.plan_exchange` of input ``which``). Returns that exchange's
    changes (empty without ``plant``). One function for the worker and the independent reference
    process (:func:`kernelsynth.jobs.oracle`), which replays it on trial 0's inputs."""
    fresh = list(get_inputs(shape, dtype, device, gen))
    for x, f in zip(inputs, fresh):
        if isinstance(x, torch.Tensor):
            x.copy_(f)
    plan, exchange = plan_exchange(inputs, gen, which) if plant else ([], [])
    apply_changes(inputs, plan)  # part of the overwrite: the block step 4 exchanges
    return exchange


def staleness_copies(inputs: Sequence) -> list:
    """The tensors :func:`check_repeat_and_fresh` overwrites: copies of the trial's inputs (there, of
    :func:`verify`'s untouched copies of them; the values are the same), dense and independent
    whatever views, broadcasts or autograd leaves ``get_inputs`` returned. The oracle replays step 2
    on these too (red team s28: on inputs that share memory -- two overlapping views of one buffer,
    ``[x, x]`` --, are expanded or require grad, the overwrite of the raw trial inputs gave other
    values or raised, and every honest candidate failed the independent check)."""
    return [x.clone() for x in inputs]


def fresh_plan(shapes: Sequence[Dict[str, int]], si: int) -> tuple:
    """``(which, plant)`` of :func:`refresh_inputs` on listed shape number ``si`` of ``shapes``, as
    :func:`verify` sets them for :func:`check_repeat_and_fresh`: input ``si // 2``, and the planted
    block on the odd shapes and on :func:`~kernelsynth.verify.inputs.exchange_extra`'s even one."""
    return si // 2, si % 2 == 1 or si == exchange_extra(list(shapes))


def later_steps(inputs: list, gen: torch.Generator, exchange: list, tol: Optional[Dict[str, float]],
                comparison: str, last_only: bool, nudge: bool, which: Optional[int],
                rounds: Optional[int]) -> list:
    """Steps 3-5 of :func:`check_repeat_and_fresh` on ``inputs`` (the tensors step 2 overwrote): a list
    of ``(changes, what)`` in call order, ``changes()`` planning one step's in-place changes
    (:func:`~kernelsynth.verify.inputs.apply_changes`; the seeded ones draw from ``gen`` when called,
    so they must be called in order, each after the previous step's changes were applied) and
    ``what`` naming it. ``exchange``: the changes :func:`refresh_inputs` returned (the planted block,
    exchanged as a step of its own). One function for the worker and the independent reference
    process (:func:`kernelsynth.jobs.oracle`), which replays the steps on its own copies."""
    n_tensors = sum(isinstance(x, torch.Tensor) and x.numel() > 0 for x in inputs)
    # the input changed alone: ``which`` (mod their count) on the caller's odd shape number ``which``; when the
    # odd shapes (``rounds``) are fewer than the tensor inputs, the first of them changes each input alone in
    # turn, so every input meets a change with the others kept (redteam_s24 ca_m1: a memo keyed on q and k,
    # and the interpreter's two listed attention shapes changed q alone only)
    every = which == 0 and rounds is not None and rounds < n_tensors
    alones = list(range(n_tensors)) if every else [which]

    def alone(w):
        return f" (input {w % n_tensors} of {n_tensors}, the others unchanged)" if n_tensors > 1 and w is not None else ""
    exchanged = [(lambda: exchange, "after values of the input were exchanged in place inside a block, keeping "
                  "every line's sum and low position moments and the tensor's values (a memo on low moments of "
                  "rows or columns)" + alone(which))] if exchange else []
    steps = [step for w in alones for step in (
             (lambda w=w: plan_last(inputs, w), "after the last element of the input alone changed in place" + alone(w)),
             (lambda w=w: plan_first(inputs, w), "after the first element of the input alone changed in place" + alone(w)))
             ] + exchanged \
        if last_only else \
        exchanged + [(lambda: plan_changes(inputs, gen, False) + plan_changes(inputs, gen, True),
          "after one element and a small region of the input changed in place"),
         (lambda: plan_permutation(inputs, gen),
          "after values of the input were moved in place (a region rotated, two elements swapped: same sums)")]
    floats = any(isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() for x in inputs)
    scaled = nudge and comparison == "allclose" and bool(tol) and floats
    return [
        *steps,
        *([(lambda: plan_nudge(inputs, tol),
            f"after every float input was scaled in place by 1 + {NUDGE_RTOLS:g} rtol (a change at the "
            "tolerance's scale: an answer memoised on a key coarser than the tolerance)")]
          if scaled and tol.get("rtol") else []),
        *([(lambda: plan_bump(inputs, tol),
            f"after the largest element of every float input moved in place by {NUDGE_RTOLS:g} (atol + rtol |x|) "
            "(a change at the absolute tolerance's scale: an answer memoised on a key coarser than it)")]
          if scaled and tol.get("atol") else [])]


def check_repeat_and_fresh(candidate, ref_model, get_inputs, shape, pristine, out, ref, gen,
                           policy: VerifyPolicy, threads_before: Optional[frozenset] = None,
                           out_dtype: Optional[torch.dtype] = None, out_strides: Optional[tuple] = None,
                           last_only: bool = False, nudge: bool = True,
                           which: Optional[int] = None, exchange: bool = False, rounds: Optional[int] = None,
                           metered: Optional[Callable] = None, audit_shape: Optional[int] = None):
    """Determinism and staleness on one shape. Returns the last output it got (the next trial's
    output must not share its storage or change it: :func:`~kernelsynth.verify.comparison.check_earlier_output`).

    ``pristine``: untouched copies of the trial's inputs; ``out``/``ref``: the trial's output and
    reference output; ``gen``: the trial's generator (draws the fresh values); ``threads_before``:
    the thread snapshot :func:`verify` checks against (None: no thread check); ``out_dtype``: the
    expected output dtype and ``out_strides`` the reference's strides at the dtype under test
    (:func:`~kernelsynth.verify.comparison.compare`).

    1. A second call on a copy of the same input (the tensors steps 2-3 overwrite) must give the
       bits of the first output (a snapshot of it, so a candidate that reuses one output buffer
       cannot agree with itself),
       or agree within ``policy.determinism_tol`` when the spec declares one, and must still match
       the reference.
    2. The same input tensor, overwritten in place with fresh values, called again: the output
       must follow (no answers cached per tensor object or data pointer).
    3. Partial staleness: then one element and, elsewhere, a small region of it changed in place
       (:func:`~kernelsynth.verify.inputs.plan_changes`) and called again: the output must follow
       (no answer memoised on a few sampled elements; one call for both changes keeps the cost
       of the check to one call per shape). With ``last_only`` (every second listed shape) the
       change is the last element alone instead (:func:`~kernelsynth.verify.inputs.plan_last`: a
       memo blind to the input's tail meets a change nowhere else), then, in one more call, the
       first element alone (:func:`~kernelsynth.verify.inputs.plan_first`: a memo blind to the
       input's head; redteam_s16 c6), and of several tensor inputs
       only input number ``which`` (mod their count; :func:`verify` passes the listed shape's
       index // 2, so the odd shapes take the inputs in turn): a memo keyed on some inputs only
       meets a change of one it ignores. When the odd shapes (``rounds``: :func:`verify` passes
       their count) are fewer than the tensor inputs, the first of them changes each input alone
       in turn (two calls per input), so no input is left out (redteam_s24 ca_m1).
    4. Then a run of elements rotated and two elements swapped (:func:`~kernelsynth.verify.inputs.plan_permutation`:
       sums, maximum and sorted values unchanged) and called again: the output must follow (no
       answer memoised on sums or other symmetric fingerprints of the input). With ``last_only``
       this step is instead a block of input ``which`` exchanged
       (:func:`~kernelsynth.verify.inputs.plan_exchange`: the block planted by the overwrite of
       step 2; every line's sum and low position moments -- up to a seeded order of 2 to 4 where
       the dims are long enough --, the values and the extrema unchanged): no answer memoised, or
       recomputed incrementally, on low moments of rows or columns (tests/adversarial/redteam_s8
       mm1, redteam_s9 lm1, sm1). With ``exchange`` on an even shape (:func:`verify` sets it on
       :func:`~kernelsynth.verify.inputs.exchange_extra`'s shape: no odd shape has every dim long),
       the exchange is one more call there, right after step 2.
    5. ``allclose`` only, with ``nudge`` (:func:`verify` sets it on every second listed shape, the
       even shape indices, where ``last_only`` is off): then every float input scaled by ``1 + 4 rtol``
       (:func:`~kernelsynth.verify.inputs.plan_nudge`: a change at the tolerance's scale) and
       called again: the output must follow (no answer memoised on a key coarser than the
       tolerance); then the largest element of every float input moved by 4 (atol + rtol |x|)
       (:func:`~kernelsynth.verify.inputs.plan_bump`: a change at the absolute tolerance's scale,
       where the nudge stays inside atol; redteam_s24 cu_s2) and called again.

    ``metered(out, inputs, ref)`` (:func:`verify` passes it under a precision policy): the outputs of
    step 2 and of every later step go to rule 23's meter too, each with the honest computations on its
    own inputs (through the reference memo: the same for every candidate of the job) -- the calls on
    an input tensor the candidate has seen (redteam_s24 ge_r1 rounded its outputs on the first of them,
    as a decode loop's static buffers would meet; red team s28 c3 from the second on, to 16 mantissa
    bits; red team s29 stored float16 there on a TF32 task, which only the lower-format count, with its
    element-by-element honest exclusion, sees).
    ``audit_shape``: the listed shape's index, under which (audit group :data:`FRESH_GROUP`, trial 0:
    :func:`~kernelsynth.verify.transport.audit_key`) step 2's output is recorded in ``policy.audit``, right after the
    call, for the parent's independent check (:func:`kernelsynth.jobs.oracle` replays its inputs:
    :func:`refresh_inputs`), and the later steps' outputs under group
    :data:`~kernelsynth.verify.transport.LATER_GROUP`, one key per step (the oracle replays them:
    :func:`later_steps`); None: not recorded (before session 28 step 2 was judged by the worker alone,
    before session 29 steps 3-5).

    The changes of steps 3 and 4 are written through ``Tensor.data``
    (:func:`~kernelsynth.verify.inputs.apply_changes`), so the input's version counter does not
    move: a memo keyed on the data pointer and ``x._version`` is stale there.
    """
    comparison, tol, device, bound = policy.comparison, policy.tol, policy.device, policy.determinism_tol
    first = out.detach().clone()
    ops = policy.census
    inputs = staleness_copies(pristine)  # called twice: the in-place overwrites below hit a tensor it has seen
    again = call_poisoned(candidate, inputs, device, policy.poison_empty, threads_before, ops)
    if not outputs_agree(again, first, bound):
        described = "bitwise" if bound is None else f"within atol={bound['atol']}, rtol={bound['rtol']}"
        raise VerificationFailure(f"not deterministic ({described}): a second call on the same input gave a "
                                  "different output")
    compare(again, ref, comparison, tol, out_dtype, out_strides)
    if not bool((_bits(out.contiguous()) == _bits(first.contiguous())).all()):
        raise VerificationFailure("the first output changed after it was returned (a later call or "
                                  "background work wrote into it)")
    extra = exchange and not last_only  # an even shape with the exchange too (first, before the other changes)
    exchange = refresh_inputs(inputs, get_inputs, shape, policy.dtype, device, gen, which, last_only or extra)
    refreshed = [x.clone() for x in inputs]
    out2 = call_poisoned(candidate, inputs, device, policy.poison_empty, threads_before, ops)
    if audit_shape is not None and policy.audit is not None:  # as every trial's output (kernelsynth/audit.py)
        policy.audit[audit_key(FRESH_GROUP, audit_shape, 0)] = digest(out2, comparison)
    ref2 = run_reference(ref_model, refreshed, comparison, policy.dtype, policy.memo)
    try:
        compare(out2, ref2, comparison, tol, out_dtype, out_strides)
    except VerificationFailure as e:
        raise VerificationFailure(f"stale answer: after the input was overwritten in place, {e}") from None
    if metered is not None:  # its precision too: the first call on an input tensor the candidate has seen
        metered(out2, refreshed, ref2)
    check_earlier_output((out, first), out2)
    latest = out2
    for k, (changes, what) in enumerate(later_steps(inputs, gen, exchange, tol, comparison, last_only, nudge, which,
                                                    rounds)):
        previous = (latest, latest.detach().clone()) if type(latest) is torch.Tensor else None
        apply_changes(inputs, changes())
        changed = [x.clone() for x in inputs]
        latest = call_poisoned(candidate, inputs, device, policy.poison_empty, threads_before, ops)
        if audit_shape is not None and policy.audit is not None:  # the parent replays these steps too
            policy.audit[audit_key(LATER_GROUP, audit_shape, k)] = digest(latest, comparison)
        with policy.memo.holding(changed) if policy.memo is not None else contextlib.nullcontext():
            ref_now = run_reference(ref_model, changed, comparison, policy.dtype, policy.memo)  # one fingerprint
            try:
                compare(latest, ref_now, comparison, tol, out_dtype, out_strides)
            except VerificationFailure as e:
                raise VerificationFailure(f"stale answer: {what}, {e}") from None
            if metered is not None:  # and every later one (red team s28 c3, red team s29)
                metered(latest, changed, ref_now)
        check_earlier_output(previous, latest)
    return latest
