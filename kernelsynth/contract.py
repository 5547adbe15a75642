"""The typed contract between the parent and its workers (no torch: both sides import it).

The parent plans one :class:`JobRequest` per candidate x config x dtype
(:mod:`kernelsynth.stages.exploration`), keyed by :meth:`JobRequest.key` once it is final (a
frozen dataclass: nothing changes it afterwards). A worker runs :func:`kernelsynth.jobs.evaluate`
on it and returns an :class:`EvaluateResult`; the pool wraps it in a
:class:`kernelsynth.workers.JobResult` with a :class:`Fault`. Every field of the result lands in
an observation column (:data:`kernelsynth.store.OBSERVATION_SCHEMA`) unless
:data:`RESULT_NOT_IN_ROW` says why not. The same request drives the independent references
(:func:`kernelsynth.jobs.oracle`, :func:`kernelsynth.audit.expected_keys`).
After the timings, a :class:`ProfileRequest` wraps the request of a version's fastest config
for the profile step (:func:`kernelsynth.jobs.profile`); its :class:`ProfileResult` fields are
observation columns too (:func:`profile_columns`).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any, Dict, List, Optional


class Fault(str, Enum):
    """Why an attempt produced no accepted observation (``ok`` when it did). Stored in the
    ``fault`` column as its value. references/EXPLORATION.md, "Fault classes"."""

    OK = "ok"
    WRONG_OUTPUT = "wrong_output"          # the verification protocol rejected the output
    COMPILE_ERROR = "compile_error"        # Triton or NVRTC rejected the source
    EXCEPTION = "exception"                # any other exception in the job
    CUDA_ERROR = "cuda_error"              # an illegal memory access or another sticky CUDA error
    OOM = "oom"                            # out of device or host memory
    TIMEOUT = "timeout"                    # no (complete) result within the per-job limit
    CRASHED = "crashed"                    # the worker process died (a signal, os._exit)
    EXIT_CALLED = "exit_called"            # the candidate called sys.exit
    TAMPERING = "tampering"                # a guarded function of torch, triton or the harness was replaced
    TIMING_INTEGRITY = "timing_integrity"  # a latency that cannot be believed (below the floor, escaped work)
    AUDIT = "audit"                        # the independent check in the parent disagreed
    SCREENED = "screened"                  # the source screen rejected it before it ran
    SANDBOX = "sandbox"                    # the containment denied something, a limit was hit, or
                                           # processes outlived the job (SECURITY.md)

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


#: Faults after which the worker's process (and CUDA context) is not reused.
RESTART_FAULTS = frozenset({Fault.CUDA_ERROR, Fault.CRASHED, Fault.TIMEOUT, Fault.EXIT_CALLED, Fault.TAMPERING,
                            Fault.SANDBOX})


@dataclass(frozen=True)
class CandidateRef:
    """Which candidate a job runs. ``role``: ``candidate`` (a spec rung), ``external`` or
    ``baseline`` (``name``: ``eager`` or ``compile``). ``file``: its source (None for baselines);
    ``config``: its tunables; ``launch``: the spec's launch block (backends that take one)."""

    role: str
    version: str
    name: str
    backend: str
    file: Optional[str]
    config: Dict[str, Any] = field(default_factory=dict)
    launch: Optional[Dict[str, Any]] = None

    @property
    def trusted(self) -> bool:
        """Baselines are built by the harness from the reference: no guard, no poisoning."""
        return self.role == "baseline"


@dataclass(frozen=True)
class JobRequest:
    """Everything a worker needs to build, verify and time one candidate x config x dtype.

    Shapes are dicts of named dims. ``reference``: the task's reference file. ``backend_source``:
    where the worker loads the candidate's backend (:func:`kernelsynth.backends.source`; None for
    baselines). ``verify_shapes``: the listed shapes; ``derived_shapes``: the harness's fresh ones
    (VERIFICATION.md rule 12); ``timing_shape``/``time``: timed at that shape when ``time``.
    ``trials``/``timing_shape_trials``: trials per listed shape / at the timing shape. ``seed``:
    the run seed. ``comparison``/``tolerance`` (``{dtype: {"atol", "rtol"}}``)/``determinism``
    (``{"atol", "rtol"}`` or None): the spec's rules. ``warmup_ms``/``rep_ms``/``timing_repeats``:
    do_bench settings. ``device``: ``"cuda"`` or ``"cpu"``; ``arch``: ``"sm_90"`` or None.
    ``reference_ops``: aten operators of the reference (fallback detection). ``interface``: the
    task's tensor interface. ``fresh_worker``: replace the worker after this job. ``cache_dir``:
    where compiled kernels and torch extensions are cached. ``precision``: the precision policy
    this dtype is held to (``allclose``; :data:`kernelsynth.verify.precision.POLICIES`,
    VERIFICATION.md rule 23; None: no precision rule). ``data_movement``: the task's category is
    data movement (a copy of an input is then a library call, VERIFICATION.md rule 14).
    ``probes``: the spec's input-range probes (normalised ``probes:`` entries, VERIFICATION.md rule
    24; empty for baselines and ``exact`` tasks); ``reduction``: the spec's reduction-length
    formula of the dims (rule 23's accumulation slack; None: the largest dim). ``timed_fresh``:
    whether every timed call gets freshly drawn inputs (VERIFICATION.md rule 15; the spec's work
    at the timing shape is compute-bound: :func:`kernelsynth.contract.timed_fresh`; None: the
    worker decides by the inputs' bytes)."""

    reference: str
    candidate: CandidateRef
    backend_source: Optional[str]
    dtype: str
    verify_shapes: List[Dict[str, int]]
    derived_shapes: List[Dict[str, int]]
    timing_shape: Optional[Dict[str, int]]
    time: bool
    trials: int
    timing_shape_trials: int
    seed: int
    comparison: str
    tolerance: Dict[str, Dict[str, float]]
    determinism: Optional[Dict[str, float]]
    warmup_ms: float
    rep_ms: float
    timing_repeats: int
    device: str
    arch: Optional[str]
    reference_ops: List[str]
    interface: Dict[str, Any]
    fresh_worker: bool
    cache_dir: Optional[str]
    precision: Optional[str] = None
    data_movement: bool = False
    probes: List[Dict[str, Any]] = field(default_factory=list)
    reduction: Optional[str] = None
    timed_fresh: Optional[bool] = None
    #: ``allclose`` only: trial 1 of each listed shape plants NaN and +-Inf in the float inputs
    #: (VERIFICATION.md rule 8, :func:`kernelsynth.verify.inputs.plant_nonfinite`); off for baselines
    #: and for a spec that opts out (``nonfinite: {plant: false, source: ...}``)
    nonfinite: bool = False
    #: keep the reference's outputs in the worker for its later jobs (kernelsynth/verify/refmemo.py;
    #: never for a job with ``fresh_worker``): the same references, computed once per worker
    reference_memo: bool = True

    @property
    def tol(self) -> Optional[Dict[str, float]]:
        """The tolerance of this job's dtype (None: none declared, e.g. ``exact``)."""
        return (self.tolerance or {}).get(self.dtype)

    def key(self, **context: Any) -> str:
        """The resume key: a content hash of every field except :data:`KEY_EXCLUDED`, the bytes
        of the reference and candidate files, and ``context`` (spec hash, hardware fingerprint,
        kernelsynth version). Equal keys: the same measurement."""
        parts = {k: v for k, v in asdict(self).items() if k not in KEY_EXCLUDED}
        files = [self.reference] + ([self.candidate.file] if self.candidate.file else [])
        parts["sources"] = [hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files]
        from .store import content_key

        return content_key(**parts, **context)


#: Arithmetic intensity (FLOPs per compulsory byte, the spec's ``work`` at the timing shape) from
#: which the timed calls get fresh inputs (VERIFICATION.md rule 15): above every GPU's float32
#: ridge point (H200: about 67 TFLOP/s over 4.8 TB/s, 14 FLOP/B), where recomputing only what
#: changed can beat the work's own time; the catalog's tasks are at most 4.5 (depthwise conv) or at
#: least 380 (conv_relu_maxpool, matmul, attention).
FRESH_TIMED_INTENSITY = 16.0


def timed_fresh(work: Dict[str, Any]) -> Optional[bool]:
    """Whether the timed calls of a task whose work at the timing shape is ``work`` (``{"flops",
    "bytes"}`` of :meth:`kernelsynth.spec.TaskSpec.work_model`) get fresh inputs: intensity at least
    :data:`FRESH_TIMED_INTENSITY`; None when the spec gives no work (the worker decides by bytes)."""
    flops, nbytes = work.get("flops"), work.get("bytes")
    if flops is None or not nbytes:
        return None
    return flops >= FRESH_TIMED_INTENSITY * nbytes


#: Request fields that do not change what is measured, so not part of :meth:`JobRequest.key`.
KEY_EXCLUDED = {
    "cache_dir": "where compiled kernels are cached: a cache hit gives the same kernel",
    "fresh_worker": "isolation of the next job; this job's measurement is the same",
    "reference_ops": "the spec's (in the spec hash) and those the reference dispatches (its source is hashed)",
    "reference_memo": "the same reference outputs, computed once per worker instead of once per job",
}


@dataclass
class EvaluateResult:
    """What :func:`kernelsynth.jobs.evaluate` measured (units in the names: ms, s, bytes).

    ``verdict``: ``accepted`` (every trial passed) or ``rejected`` (``reason`` says why).
    ``trials``: trials run. ``max_abs_err``/``max_rel_err``: over every trial. ``median_ms``,
    ``p20_ms``, ``p80_ms``, ``timing_spread``, ``synced_ms``: the timing (None when not timed).
    ``precision_rms``/``precision_honest_rms``/``precision_bound``: the precision rule's statistic
    of the candidate, of the honest computations at the policy, and its bound (VERIFICATION.md
    rule 23; None without a policy); ``precision_tail``/``precision_tail_bound``: the fraction of
    outputs in the error tail and its bound, ``precision_low``/``precision_low_bound``: the fraction
    of outputs with a lower format's mantissa and its bound, ``precision_rel``/``precision_rel_bound``:
    the fraction of outputs with a relative error above the relative tail's threshold and its bound
    (rule 23; None when not measured). ``first_call_s``: the first call (JIT compile unless cached).
    ``verify_s``/``timing_s``: seconds of the protocol / of the timed measurement. ``aten_ops``
    (every operator the verified calls dispatched), ``reference_ops_used`` (those among the spec's
    reference_ops), ``library_calls`` (those that do arithmetic, not layout) and
    ``foreign_kernels`` (GPU: launched kernels that are not the candidate's own): comma-separated
    names, VERIFICATION.md rule 14; ``kernel_census``: whether the launched-kernel census ran
    (GPU, timed jobs). Compile stats (``n_regs`` ... ``compile_cached``) come from the backend
    (:meth:`kernelsynth.backends.Backend.compile_stats`). ``peak_mem_bytes``: the job's peak GPU
    allocation, less what the worker's reference memo held when the job began.
    ``reference_hits``/``reference_calls``: of the reference computations the memo was asked for,
    how many it already held (kernelsynth/verify/refmemo.py; None when the memo was off). ``audit``: ``{audit key: digest}`` for the
    parent's independent check. ``recycle_worker``: the worker is replaced after this job."""

    verdict: str = "accepted"
    reason: str = ""
    trials: int = 0
    max_abs_err: Optional[float] = None
    max_rel_err: Optional[float] = None
    precision_rms: Optional[float] = None
    precision_honest_rms: Optional[float] = None
    precision_bound: Optional[float] = None
    precision_tail: Optional[float] = None
    precision_tail_bound: Optional[float] = None
    precision_low: Optional[float] = None
    precision_low_bound: Optional[float] = None
    precision_rel: Optional[float] = None
    precision_rel_bound: Optional[float] = None
    median_ms: Optional[float] = None
    p20_ms: Optional[float] = None
    p80_ms: Optional[float] = None
    timing_spread: Optional[float] = None
    synced_ms: Optional[float] = None
    first_call_s: Optional[float] = None
    verify_s: Optional[float] = None
    timing_s: Optional[float] = None
    aten_ops: Optional[str] = None
    reference_ops_used: Optional[str] = None
    library_calls: Optional[str] = None
    foreign_kernels: Optional[str] = None
    kernel_census: Optional[bool] = None
    n_regs: Optional[int] = None
    n_spills: Optional[int] = None
    shared_bytes: Optional[int] = None
    n_kernels: Optional[int] = None
    local_bytes: Optional[int] = None
    compile_s: Optional[float] = None
    compile_cached: Optional[bool] = None
    peak_mem_bytes: Optional[int] = None
    reference_hits: Optional[int] = None
    reference_calls: Optional[int] = None
    audit: Dict[str, Any] = field(default_factory=dict)
    recycle_worker: bool = False

    def update(self, values: Dict[str, Any]) -> None:
        """Set fields from a dict (compile stats, timings). Raises KeyError naming a key that is
        not a field, so nothing a backend reports is dropped unseen."""
        unknown = set(values) - {f.name for f in fields(self)}
        if unknown:
            raise KeyError(f"not fields of EvaluateResult: {sorted(unknown)}")
        for k, v in values.items():
            setattr(self, k, v)


#: Result fields that are not observation columns, and why.
RESULT_NOT_IN_ROW = {
    "audit": "the raw outputs, consumed by the independent check in the parent (kernelsynth/audit.py)",
    "recycle_worker": "a control flag for the worker pool (JobResult.recycle)",
}


def result_columns() -> List[str]:
    """The observation columns an :class:`EvaluateResult` fills: its fields but
    :data:`RESULT_NOT_IN_ROW`."""
    return [f.name for f in fields(EvaluateResult) if f.name not in RESULT_NOT_IN_ROW]


@dataclass(frozen=True)
class ProfileRequest:
    """One profile job (:func:`kernelsynth.jobs.profile`): run Nsight Compute on one call of the
    candidate of ``request`` (its timing shape, after ``warmup_calls`` unprofiled calls) and read
    ``metrics`` of every kernel that call launched. ``ncu``: the executable (None: found on PATH
    or in the usual install folders); ``timeout_s``: for the whole ncu run. references/EXPLORATION.md,
    "Profile"."""

    request: JobRequest
    metrics: List[str]
    ncu: Optional[str] = None
    timeout_s: float = 300.0
    warmup_calls: int = 3
    #: More candidates profiled in the same ncu run, after ``request`` and in this order (one ncu
    #: and driver start for all; a marker kernel before each profiled call tells their kernels
    #: apart, :func:`kernelsynth.profiling.split_calls`); the job then returns one result each.
    batch: List[JobRequest] = field(default_factory=list)

    @property
    def requests(self) -> List[JobRequest]:
        return [self.request, *self.batch]


@dataclass
class ProfileResult:
    """What one profile found, for the observation of the profiled config (nullable columns).

    ``profile``: ``ncu`` when profiled, else ``skipped: <why>`` (no GPU, ncu missing or not
    permitted to read the counters, profiling off) or ``failed: <why>``. ``ncu_kernel``: the
    kernel the numbers are of (the longest of the call); ``ncu_kernels``: kernels the call
    launched; ``ncu_duration_ms``: their summed GPU time under the profiler (not a latency: the
    profiler replays each kernel with caches flushed). Percentages of peak (ncu's
    ``pct_of_peak_sustained_*``): ``ncu_dram_pct`` (DRAM throughput), ``ncu_sm_pct`` (SM
    throughput), ``ncu_tensor_pct`` (tensor pipe, active cycles), ``ncu_occupancy_pct`` (achieved
    occupancy), ``ncu_l2_hit_pct`` (L2 sector hit rate). ``ncu_registers``: per thread;
    ``ncu_local_insts``: local-memory load and store instructions executed (spill traffic);
    ``ncu_stalls``: the top stall reasons, ``reason cycles`` per issued instruction;
    ``ncu_metrics``: every metric read, JSON; ``profile_s``: seconds of the profile job."""

    profile: Optional[str] = None
    ncu_kernel: Optional[str] = None
    ncu_kernels: Optional[int] = None
    ncu_duration_ms: Optional[float] = None
    ncu_dram_pct: Optional[float] = None
    ncu_sm_pct: Optional[float] = None
    ncu_tensor_pct: Optional[float] = None
    ncu_occupancy_pct: Optional[float] = None
    ncu_l2_hit_pct: Optional[float] = None
    ncu_registers: Optional[int] = None
    ncu_local_insts: Optional[int] = None
    ncu_stalls: Optional[str] = None
    ncu_metrics: Optional[str] = None
    profile_s: Optional[float] = None


def profile_columns() -> List[str]:
    """The observation columns a :class:`ProfileResult` fills (all of its fields)."""
    return [f.name for f in fields(ProfileResult)]
