"""Jobs that run inside worker processes (see :mod:`kernelsynth.workers`).

Each job takes one picklable payload and returns a picklable value: :func:`evaluate` and
:func:`oracle` take a :class:`kernelsynth.contract.JobRequest`; :func:`evaluate` returns a
:class:`kernelsynth.contract.EvaluateResult`. :func:`ceilings` measures the ceilings;
:func:`profile` takes a :class:`kernelsynth.contract.ProfileRequest` and runs Nsight Compute on
:mod:`kernelsynth.profile_driver`; :func:`import_kernelbench` analyses one problem file for the
importer. The hardware probe, ``probe``, is :func:`kernelsynth.hwprobe.probe` (a worker that runs
only it does not import this module). Nothing here runs in the parent process: this module
imports torch and initialises CUDA.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import torch


def _wrap_manual_seed_as_dynamo_would() -> None:
    """Do now, before any integrity snapshot, the one rebinding a first ``import torch._dynamo``
    makes in the torch namespace (torch/_dynamo/__init__.py: ``torch.manual_seed`` wrapped by
    ``torch._disable_dynamo``, registered as ``aten::manual_seed``), so that a candidate whose
    torch.compile imports dynamo later is not blamed for it by the guard -- without paying for the
    import itself (about 2.3 s of CPU per worker on the project's CPU machine; most jobs never
    compile). Torch builds without ``torch._disable_dynamo`` import dynamo instead, and so does a
    GPU worker: its kernel census (``torch.profiler.profile`` with CUDA activity) imports
    ``torch._inductor`` and dynamo at its first call anyway, which would land in a job's verify time
    (kernelsynth/verify/dynamo_deferral.py)."""
    if torch.manual_seed is not torch.random.manual_seed:
        return
    wrap = getattr(torch, "_disable_dynamo", None)
    if wrap is None or os.environ.get("TRITON_INTERPRET") != "1":
        importlib.import_module("torch._dynamo")  # rebinds torch.manual_seed itself
        return
    import torch.jit._builtins as jit_builtins

    torch.manual_seed = wrap(torch.manual_seed)
    jit_builtins._register_builtin(torch.manual_seed, "aten::manual_seed")


_wrap_manual_seed_as_dynamo_would()

from . import gpulock, timing
from .backends import BuildContext
from .contract import EvaluateResult, JobRequest
from .backends import load_source as load_backend
from .interpreter import match_gpu_integer_arithmetic, patch_bfloat16_rounding
from .loading import import_file
from .hwprobe import probe  # noqa: F401 - the "probe" job (kernelsynth/hwprobe.py)
from .screen import host_access
from .verify.precision import (HonestReferences, PrecisionMeter, headroom, honest_low_mask, relative_threshold,
                               trial_sums)
from .verify.protocol import check_small_groups, fresh_plan, later_steps, refresh_inputs, staleness_copies
from .verify.inputs import apply_probe, probe_has_precision, reach
from .audit import special_values_of
from .verify.transport import FRESH_GROUP, LATER_GROUP, audit_key, audit_view
from .verify.census import profiled_of
from .verify.guard import check_numeric, dispatch_tables
from .verify.refmemo import MEMO, LazyReference
from .verify import fused_sums  # noqa: F401 - loaded before the integrity snapshot, so the guard covers it (rule 13)
from .verify import (Census, PerturbDraws, ScaleDraws, VerificationFailure, VerifyPolicy, apply_changes, aten_ops_of, build_seed,
                     apply_rolling, check_integrity, check_no_new_threads, check_outputs_released, compare, digest,
                     guard_also, reset_returned,
                     integrity_snapshot, plan_rolling,
                     install_watch, kernel_census, library_calls, profiled_library_calls, profiled_ops,
                     parse_audit_key, plan_changes, probe_perturb, probe_tolerance, process_fingerprint,
                     recheck_after_settling, run_reference,
                     shape_label, thread_ids, trial_inputs, trial_seed, verify)


#: Why the interpreter's bfloat16 rounding is not the GPU's in this worker (None: patched or on a GPU).
INTERPRETER_BF16 = patch_bfloat16_rounding() if os.environ.get("TRITON_INTERPRET") == "1" else None
#: Why the interpreter still checks integer overflow, which GPU kernels do not (None: turned off or on a GPU).
INTERPRETER_INT = match_gpu_integer_arithmetic() if os.environ.get("TRITON_INTERPRET") == "1" else None


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def health(payload: Dict[str, Any]) -> Dict[str, Any]:
    """The device check a pool runs on a fresh worker of a device after a job there ended
    ``crashed``, ``cuda_error`` or ``timeout`` (kernelsynth/workers.py, "failing devices"):
    ``visible_devices`` (this worker's ``CUDA_VISIBLE_DEVICES``) and, with ``payload["cuda"]``,
    the GPU's name after a small kernel (a sum of 2**20 float32 ones) ran and synchronised; raises
    (the check fails) when CUDA is unusable or the sum is wrong."""
    out: Dict[str, Any] = {"visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    if payload.get("cuda"):
        x = torch.ones(1 << 20, device="cuda")
        total = float(x.sum().item())
        torch.cuda.synchronize()
        if total != float(1 << 20):
            raise RuntimeError(f"CUDA error: the device summed 2**20 ones to {total}")
        out["name"] = torch.cuda.get_device_name(0)
    return out


def ceilings(payload: Dict[str, Any]) -> Dict[str, Any]:
    """Measured ceilings of this GPU, each the best of several methods
    (:func:`kernelsynth.timing.measure_ceilings`): ``copy_gbps`` (device-to-device copy, bytes
    read + written, GB/s), ``matmul_tflops`` (bf16 matmul, TFLOP/s) and ``methods`` (every
    method's value, or its error). ``payload``: optional ``copy_bytes``, ``matmul_sizes`` and
    ``cache_dir`` (where the CUDA copy kernel's cubin is cached)."""
    cache = payload.get("cache_dir")
    return timing.measure_ceilings(int(payload.get("copy_bytes", 2 << 30)),
                                   [int(n) for n in payload.get("matmul_sizes", timing.MATMUL_SIZES)],
                                   Path(cache) if cache else None)


def inductor(payload: Dict[str, Any]) -> Dict[str, Any]:
    """TorchInductor's generated code for the reference, as a candidate file's text and the facts
    counted in it (:func:`kernelsynth.inductor_extract.extract`, which documents ``payload``)."""
    from .inductor_extract import extract

    return extract(payload)


def import_kernelbench(payload: Dict[str, Any]) -> Dict[str, Any]:
    """One KernelBench-format problem analysed for ``kernelsynth-tools import-kernelbench``, in a
    process forked from this worker with a time limit
    (:func:`kernelsynth.importers.kernelbench.run_forked`, which documents ``payload`` and the
    plain dict returned); the parent writes the task folder."""
    from .importers.kernelbench import run_forked

    return run_forked(payload)


def profile(p) -> Dict[str, Any]:
    """Profile one call of a verified candidate with Nsight Compute (kernelsynth/profiling.py):
    ``p`` is a :class:`kernelsynth.contract.ProfileRequest`; returns the
    :class:`kernelsynth.contract.ProfileResult` fields (``profile`` says ``ncu``, or why not); with
    a batch, ``{"batch": [fields of each request, in order]}``, each ``profile_s`` the run's
    seconds divided by its calls. This worker starts ncu on :mod:`kernelsynth.profile_driver` and initialises no CUDA itself."""
    from . import profiling

    start = time.perf_counter()
    ncu = profiling.find_ncu(p.ncu)
    if ncu is None:
        where = p.ncu or "PATH, " + ", ".join(profiling.NCU_PLACES)
        out = dict(profiling.skipped(f"ncu (Nsight Compute) not found ({where})"), profile_s=time.perf_counter() - start)
        return {"batch": [dict(out) for _ in p.requests]} if p.batch else out
    workdir = profiling.temp_workdir()
    n = len(p.requests)
    try:
        outs = profiling.run_ncu_batch(profiling.request_file(workdir, p), ncu, list(p.metrics), p.timeout_s,
                                       workdir, n)
    finally:
        profiling.cleanup(workdir)
    spent = time.perf_counter() - start
    if not p.batch:
        return dict(outs[0], profile_s=spent)
    return {"batch": [dict(o, profile_s=spent / n) for o in outs]}  # the run's time shared among its calls


#: torch.manual_seed before building the reference and a trusted baseline, so modules that create
#: their parameters the same way (KernelBench's convention) get the same weights. Untrusted
#: candidates and their references are built from a fresh seed per trial instead
#: (:func:`kernelsynth.verify.params.build_seed`, VERIFICATION.md rule 21).
INIT_SEED = 42


def init_inputs(ref_mod, shape: Dict[str, int], seed: int = INIT_SEED) -> list:
    """The reference's constructor arguments for ``shape``: ``get_init_inputs(shape)`` when it
    takes a parameter (tasks whose parameters depend on the shape, e.g. channel counts), else
    ``get_init_inputs()``; called after :func:`seed_draws` of ``seed`` (the trial's build seed
    where the worker and the oracle build a trial's modules), so a ``get_init_inputs`` that draws
    random tensors (a weight passed to the constructor) gives the same ones in every process that
    builds that trial (session 17's importer attack: unseeded, the oracle's reference had other
    weights than the worker's and an honest v0 failed the independent check)."""
    seed_draws(seed)
    fn = ref_mod.get_init_inputs
    try:
        takes_shape = len(inspect.signature(fn).parameters) > 0
    except (TypeError, ValueError):
        takes_shape = False
    return list(fn(shape) if takes_shape else fn())


def _place(model, device: torch.device, dtype: torch.dtype):
    """Move a module to ``device`` and, for floating dtypes, cast its parameters to ``dtype``."""
    model = model.to(device)
    if dtype.is_floating_point:
        model = model.to(dtype)
    return model.eval()


def seed_draws(seed: int) -> None:
    """Seed the generators a module's constructor draws from: the CPU default generator and, only
    when CUDA is already initialised in this process, every CUDA device's. For modules built on
    the CPU (every reference and candidate: built, then moved by :func:`_place`) the draws are
    those after ``torch.manual_seed(seed)`` (``tests/test_protocol_cost.py``); unlike it, no lazy
    seeding call is queued for device types never initialised here (MPS, XPU, MTIA, and CUDA on
    the CPU path: each such call formats a stack trace, ``traceback.format_stack``, and some
    queues only grow: 0.10 s per 100 builds on the H200, session 11). ``seed``: an int in
    ``torch.manual_seed``'s range; ValueError outside it (as ``torch.manual_seed``)."""
    seed = int(seed)
    torch.default_generator.manual_seed(seed)
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(seed)


def _constructing(seed: int, perturb):
    """:func:`seed_draws` (``torch.manual_seed``'s draws on the CPU) -- for a build without a
    perturbation (and not of the baselines' :data:`INIT_SEED`) the shared :data:`SHARED_BUILD_SEED`
    followed by ``1 + seed % ADVANCE_MAX`` draws, so ``torch.initial_seed()`` says nothing about
    the weights --, then the context a module is constructed in: the parameter
    perturbation ``perturb`` of VERIFICATION.md rule 21 (``"plant"``/``"swap"``/``"inside"``/``"rest"``:
    :class:`kernelsynth.verify.params.PerturbDraws`, its block planted in all four), an input-range probe's parameter scaling
    (``("scale", s)``: :class:`kernelsynth.verify.params.ScaleDraws`, rule 24) or none (None)."""
    if perturb is None and seed != INIT_SEED:
        # every mode-free build of a trial: one initial seed, then a build-specific number of draws
        # (redteam_s11 cp1 cached its packed weights on torch.initial_seed(), skipping the cache
        # while a dispatch mode was active -- the shared-seed trials' PerturbDraws -- so no two
        # builds it cached for had one initial seed with other weights; now every two mode-free
        # builds of a shape do, e.g. listed trial 4 and the census call, the timing trial and the timed one)
        seed_draws(SHARED_BUILD_SEED)
        torch.empty(1 + int(seed) % ADVANCE_MAX).uniform_()
        return nullcontext()
    seed_draws(seed)
    if isinstance(perturb, tuple):
        return ScaleDraws(perturb[1])
    return PerturbDraws(seed, perturb, plant=True) if perturb else nullcontext()


#: The initial seed of every mode-free build of an untrusted trial (:func:`_constructing`): what
#: ``torch.initial_seed()`` answers while any of them is constructed ...
SHARED_BUILD_SEED = 0x5EED
#: ... after which the CPU generator is advanced by ``1 + seed % ADVANCE_MAX`` draws (the trial's
#: own seed), so the weights still differ from build to build.
ADVANCE_MAX = 4093


def _reference(ref_mod, init: list, device: torch.device, dtype: torch.dtype, seed: int = INIT_SEED,
               perturb: Optional[str] = None):
    with _constructing(seed, perturb):
        model = ref_mod.Model(*init)
    return _place(model, device, dtype)


#: Dynamo's recompile limit for the torch.compile baseline: one compile per listed shape and the
#: timing shape, far above any spec's count (dynamo's default, 8, sent the timing shape of every spec
#: with 8 listed shapes to eager: session 26).
COMPILE_RECOMPILE_LIMIT = 256


def compile_baseline(model, backend: str = "inductor"):
    """``torch.compile(model, dynamic=False)`` for the ``compile`` baseline, after a reset of dynamo's
    caches (no fallback carried over from an earlier job) and with its recompile limits raised to
    :data:`COMPILE_RECOMPILE_LIMIT`: the baseline is verified on every listed shape and then timed on
    the timing shape, each a new static-shape compile, and past dynamo's limit (8 by default) a frame
    runs eager, silently. Measured on an H100 (session 26): softmax_backward's 8 listed shapes sent the
    timing shape to eager (torch.compile 1.3915 ms against eager's 1.3929), and so did every spec with
    8 or more listed shapes (column_sum, cross_entropy, cumsum_rows, quantize_int8_rows,
    rmsnorm_residual, softmax_rows, topk_rows, softmax_backward): their "torch.compile" ratios until
    then were eager's. ``backend``: dynamo's backend (tests pass ``eager``)."""
    import torch._dynamo
    import torch._dynamo.config as dynamo_config

    torch._dynamo.reset()
    for name in ("recompile_limit", "accumulated_recompile_limit", "cache_size_limit", "accumulated_cache_size_limit"):
        if hasattr(dynamo_config, name):
            setattr(dynamo_config, name, max(getattr(dynamo_config, name), COMPILE_RECOMPILE_LIMIT))
    return torch.compile(model, dynamic=False, backend=backend)


def _build(p: JobRequest, backend, mod, ref_mod, init: list, device: torch.device, dtype: torch.dtype,
           seed: int = INIT_SEED, perturb: Optional[str] = None, reference: Optional[Callable] = None):
    """The callable model of the job's candidate: a baseline (the reference, or torch.compile of
    it), or what its backend builds (:meth:`kernelsynth.backends.Backend.build`), its parameters
    drawn after ``torch.manual_seed(seed)`` (and perturbed: :func:`_constructing`). ``reference``:
    what makes the backend's reference model (default: :func:`_reference` with the same arguments;
    ``evaluate`` passes the memo's copies, :meth:`kernelsynth.verify.refmemo.ReferenceMemo.module`)."""
    cand = p.candidate
    if cand.trusted:
        model = _reference(ref_mod, init, device, dtype)
        if cand.name == "compile":
            model = compile_baseline(model)
        return model

    def seeded(make):
        with _constructing(seed, perturb):
            model = make()
        return _place(model, device, dtype)

    return backend.build(BuildContext(module=mod, init=init, candidate=cand, dtype=p.dtype, arch=p.arch,
                                      interface=p.interface, cache_dir=p.cache_dir,
                                      reference=reference or (lambda: _reference(ref_mod, init, device, dtype, seed,
                                                                                 perturb)),
                                      seeded=seeded))


def evaluate(p: JobRequest) -> EvaluateResult:
    """Build, verify and (on a GPU) time one candidate x config x dtype.

    Returns the raw measurements (:class:`kernelsynth.contract.EvaluateResult`): the verdict
    ("accepted" when every trial passed, else "rejected") and reason, trials, errors, the timing
    (ms; None when not timed), ``first_call_s``, ``verify_s`` (seconds of the correctness
    protocol: listed, derived and timing-shape trials), ``timing_s`` (seconds of the timed
    measurement, with its integrity checks; None when not timed), the backend's compile stats,
    ``peak_mem_bytes``, the outputs for the independent check and whether the worker is recycled;
    for ``allclose`` with a precision policy, ``precision_rms``/``precision_honest_rms``/
    ``precision_bound`` and the tail and lower-format columns (accepted observations;
    :func:`_precision_columns`). Exceptions
    propagate to the worker loop, which turns them into a fault class.
    """
    device = torch.device(p.device)
    dtype = _dtype(p.dtype)
    ref_mod = import_file(p.reference)
    cand = p.candidate
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    trusted = cand.trusted  # torch.compile may install hooks of its own
    # the worker's memo of reference outputs, shared by the ladder's jobs; off (and emptied) for a job
    # with a fresh worker: the candidate must not find the answers of the trials it meets (refmemo)
    use_memo = p.reference_memo and not p.fresh_worker  # decided before the candidate's import, which could
    MEMO.begin(use_memo, device)                          # switch MEMO back on (redteam_s13 sm_rm1)
    memo_held = MEMO.device_bytes() if device.type == "cuda" else 0
    reference_digest = hashlib.sha256(Path(p.reference).read_bytes()).hexdigest()
    install_watch()  # the census's counters: thread starts, host doors, Triton launches (rule 14)
    reset_returned()  # the outputs of this job's verified calls, which the candidate must not keep (rule 10)
    backend = None if trusted else load_backend(p.backend_source)  # trusted code, loaded before the guard
    threads = None if trusted else thread_ids()  # threads alive before the candidate's import
    guard_also(reference=ref_mod, **{"reference.Model": ref_mod.Model})
    guard = None if trusted else integrity_snapshot()
    if guard is not None:  # the reference's operators' kernels, before the candidate's import (rule 13)
        guard.dispatch = dispatch_tables(set(p.reference_ops or []) | set(_reference_dispatch(ref_mod, p, device, dtype)))
    fingerprint = process_fingerprint()
    modules_before = set(sys.modules)
    mod = None if backend is None else backend.load(cand.file)
    built: Dict[tuple, tuple] = {}  # (constructor arguments, seed) -> (candidate model, reference model)
    built_once: list = []

    def models_for(shape, group="listed", si=0, t=0):
        """The (candidate, reference) pair of trial ``t`` of shape number ``si`` of ``group``, both
        built from the same seed and cast to the job's dtype. Parameters are inputs (VERIFICATION.md
        rule 21): an untrusted candidate gets a fresh seed per trial (trial 1 of a listed shape: trial
        0's seed with one element of every random draw changed), and only the current trial's
        pair is kept (an answer cached across instances is stale on the next trial); trusted
        baselines keep one pair per constructor arguments (torch.compile would recompile per instance)."""
        seed, perturb = (INIT_SEED, None) if trusted else build_seed(p.seed, group, si, t)
        init = init_inputs(ref_mod, shape, seed)
        perturb = probe_perturb(p.probes, group) or perturb  # an input-range probe's scaled parameters (rule 24)
        key = (repr(init), seed, perturb)
        if key not in built:
            first = not built and not built_once
            if not trusted:
                built.clear()
            # the reference is built when first needed: with the memo on, a later job's trials find its
            # outputs kept (kernelsynth/verify/refmemo.py); the memo's key is how it is built
            # every reference model of this build (the candidate's parameters for a native kernel, the
            # reference's outputs on a memo miss): a copy of one kept per build while the memo is on
            build_key = (reference_digest, p.dtype, str(device)) + key
            make = functools.partial(MEMO.module, build_key if use_memo else None,
                                     functools.partial(_reference, ref_mod, init, device, dtype, seed, perturb))
            reference = LazyReference(make, (reference_digest, p.dtype) + key)
            built[key] = (_build(p, backend, mod, ref_mod, init, device, dtype, seed, perturb, reference=make),
                          reference if use_memo else reference.module)
            built_once.append(key)
            if guard is not None and first:  # later builds: the check after each trial covers them
                check_integrity(guard)
        return built[key]

    model, ref_model = models_for(p.verify_shapes[0])
    out = EvaluateResult()
    # operators every verified call dispatched, and the doors around them (VERIFICATION.md rule 14)
    census = None if trusted else Census(movement=p.data_movement)
    profiled: set = set()  # operators the profiler recorded in one call (CPU: profiled_call; GPU: kernel census)
    policy = VerifyPolicy(dtype=dtype, device=device, seed=p.seed, comparison=p.comparison, tol=p.tol,
                          determinism_tol=p.determinism, poison_empty=not trusted, check_threads=not trusted,
                          guard=guard, threads_before=threads,
                          audit=None if trusted else out.audit,  # raw outputs for kernelsynth/audit.py
                          census=census, precision=p.precision, reduction=_reduction(p),
                          memo=MEMO if use_memo else None)

    snapshot = None if backend is None else backend.snapshot(mod)
    # First call (includes JIT compilation unless cached on disk), on the first verify shape.
    gen = torch.Generator(device=device).manual_seed(trial_seed(p.seed, "first-call"))
    first_inputs = ref_mod.get_inputs(p.verify_shapes[0], dtype, device, gen)
    start = time.perf_counter()
    with torch.no_grad():
        model(*first_inputs)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    out.first_call_s = time.perf_counter() - start

    started = time.perf_counter()
    try:
        # one settle re-check of every group's retained outputs, before timing (VERIFICATION.md rule 15)
        rep = verify(model, ref_model, ref_mod.get_inputs, list(p.verify_shapes), policy, trials=p.trials,
                     special_values=special_values_of(p), models_for=models_for, group="listed", settle=False)
        out.trials, out.max_abs_err, out.max_rel_err = rep.trials, rep.max_abs_err, rep.max_rel_err
        reports = [rep]
        for k, probe in enumerate(p.probes):  # input-range probes on the listed shapes (VERIFICATION.md rule 24)
            pr = verify(model, ref_model, ref_mod.get_inputs, list(p.verify_shapes), policy, trials=1,
                        determinism=False, models_for=models_for, group=f"probe{k}", settle=False, probe=probe)
            out.trials += pr.trials
            reports.append(pr)
        if p.derived_shapes:  # fresh and above-4096 shapes: one trial each (VERIFICATION.md rule 12)
            extra = verify(model, ref_model, ref_mod.get_inputs, p.derived_shapes, policy, trials=1,
                           determinism=False, models_for=models_for, group="derived", settle=False)
            out.trials += extra.trials
            out.max_abs_err = max(out.max_abs_err, extra.max_abs_err)
            out.max_rel_err = max(out.max_rel_err, extra.max_rel_err)
            reports.append(extra)
        if p.timing_shape and p.time:
            big = verify(model, ref_model, ref_mod.get_inputs, [p.timing_shape], policy,
                         trials=p.timing_shape_trials, determinism=False, models_for=models_for, group="timing",
                         settle=False)
            out.trials += big.trials
            out.max_abs_err = max(out.max_abs_err, big.max_abs_err)
            out.max_rel_err = max(out.max_rel_err, big.max_rel_err)
            reports.append(big)
            reports += [r for r in [check_small_groups(reports)] if r is not None]  # rule 23's pool
            _settle(reports, policy)
            _released(reports, trusted)
            out.verify_s = time.perf_counter() - started
            started = time.perf_counter()
            is_own = None if backend is None else backend.own_kernels(mod, cand, modules_before)
            out.update(_time(*models_for(p.timing_shape, "timed", 0, 0), ref_mod, p, policy, is_own, big.out_dtype,
                             profiled, models_for=models_for,
                             out_strides=big.out_strides.get(shape_label(p.timing_shape))))
            out.timing_s = time.perf_counter() - started
        else:
            reports += [r for r in [check_small_groups(reports)] if r is not None]  # rule 23's pool
            _settle(reports, policy)
            _released(reports, trusted)
            if census is not None:  # one call under torch.profiler (the GPU's runs with the kernel census)
                _profiled_call(models_for, ref_mod, p, policy, profiled, rep.out_dtype,
                               rep.out_strides.get(shape_label(p.verify_shapes[-1])))
        out.update(_precision_columns(reports))
    except VerificationFailure as e:
        out.verdict, out.reason = "rejected", f"wrong output: {e}"
    if out.verify_s is None:
        out.verify_s = time.perf_counter() - started
    out.reference_hits, out.reference_calls = (MEMO.hits, MEMO.calls) if use_memo else (None, None)
    if census is not None:  # which operators did the verified calls dispatch? (VERIFICATION.md rule 14)
        if cand.file and str(cand.file).endswith(".py"):  # raw-memory doors the census cannot count
            census.update(host_access(Path(cand.file).read_text(errors="replace")))
        ops = sorted(census)
        out.aten_ops = ",".join(ops)
        out.reference_ops_used = ",".join(o for o in ops if o in set(p.reference_ops or [])) or None
        calls = set(library_calls(ops, p.reference_ops or [])) | set(profiled_library_calls(profiled, p.reference_ops))
        calls |= set(profiled_library_calls(profiled_of(census), p.reference_ops))  # every verified call's profiler
        if census.calls_without_launch and backend is not None and backend.counts_launches(mod, modules_before):
            calls.add(NO_OWN_KERNEL)  # a verified call that launched no kernel: a library did the work
        out.library_calls = ",".join(sorted(calls)) or None
        if guard is not None:
            check_integrity(guard)
    if backend is not None:  # registers, spills, shared memory, kernels, compile seconds
        out.update(backend.compile_stats(mod, model, snapshot, modules_before))
    # A fresh worker after this job (workers.py) for trusted baselines (torch.compile's compile pool
    # starts timer threads after the job), when the request asks (exploration.fresh_worker), or when
    # the job left threads running or the process changed (process_fingerprint). The parent also
    # replaces it when the independent check fails.
    out.recycle_worker = trusted or p.fresh_worker or bool(thread_ids() - threads) \
        or process_fingerprint() != fingerprint
    if device.type == "cuda":
        out.peak_mem_bytes = int(torch.cuda.max_memory_allocated(device)) - memo_held  # not the earlier jobs' memo
        del model
        torch.cuda.empty_cache()  # give this job's memory back before the next candidate
    return out


#: The ``library_calls`` entry of a candidate with a verified call that launched no kernel of its
#: own (VERIFICATION.md rule 14): what it returned was computed by library operators alone.
NO_OWN_KERNEL = "(no kernel of its own)"


def _profiled_call(models_for, ref_mod, p: JobRequest, policy: VerifyPolicy, profiled: set, out_dtype,
                   out_strides: Optional[tuple] = None) -> None:
    """One more call of the candidate, on the last listed shape with fresh inputs and parameters
    (group ``census``), under ``torch.profiler`` (:func:`kernelsynth.verify.census.profiled_ops`):
    its operators go into ``profiled`` (they are seen whatever the Python dispatch key, where the
    dispatch mode's census is not). Its output must match the reference (``out_dtype``: the
    expected output dtype, ``out_strides`` the reference's strides at the dtype under test on that
    shape); a thread started in it fails it (rule 11)."""
    shape, si = p.verify_shapes[-1], len(p.verify_shapes) - 1
    model, ref_model = models_for(shape, "census", si, 0)
    inputs, _ = trial_inputs(ref_mod.get_inputs, shape, si, 0, trial_seed(p.seed, "census"), policy.dtype,
                             policy.device, False)
    pristine = [x.clone() for x in inputs]
    got, ops = profiled_ops(model, inputs, policy.device)  # a thread started in the call fails it
    try:
        ref = run_reference(ref_model, [x.clone() for x in pristine], p.comparison, policy.dtype, policy.memo)
        compare(got, ref, p.comparison, policy.tol, out_dtype, out_strides)
        _unverified_precision(ref_model, p, policy, shape, memo=policy.memo)(got, pristine, ref)  # rule 15's checks
    except VerificationFailure as e:
        raise VerificationFailure(f"output of the profiled call (census): {e}") from None
    profiled.update(ops)
    gen = torch.Generator(device=policy.device).manual_seed(trial_seed(p.seed, "unwatched"))
    _unwatched_scale_probes(model, ref_model, p, policy, pristine, gen, out_dtype, out_strides, where="the last listed shape",
                            models_for=models_for, shape=shape, si=si, memo=policy.memo)


def _reduction(p: JobRequest):
    """``shape -> n`` of the request's ``reduction`` formula (rule 23's accumulation slack), or
    None (the largest dim)."""
    if not p.reduction:
        return None
    from .spec import evaluate

    return lambda shape: float(evaluate(p.reduction, dict(shape)))


def _settle(reports, policy: VerifyPolicy) -> None:
    """One :func:`~kernelsynth.verify.protocol.recheck_after_settling` of the outputs every
    report retained (listed, derived and timing-shape groups: one pause per job, not per group)."""
    retained = [r for rep in reports for r in rep.retained]
    threads = policy.threads_before if policy.check_threads else None
    recheck_after_settling(retained, policy.comparison, policy.tol, policy.device, threads, policy.settle_s)


def _released(reports, trusted: bool) -> None:
    """Let go of every output the reports retained and require that the candidate kept none of
    the outputs its verified calls returned (:func:`~kernelsynth.verify.poison.check_outputs_released`,
    VERIFICATION.md rule 10; not for trusted baselines)."""
    for rep in reports:
        rep.retained = []
    if not trusted:
        check_outputs_released()


def _precision_columns(reports) -> Dict[str, Any]:
    """The precision rule's numbers for the observation: those of the shape group (listed, derived,
    timing) whose statistic came closest to its bound (VERIFICATION.md rule 23)."""
    measured = [r.precision for r in reports if r.precision.get("rms") is not None]
    out: Dict[str, Any] = dict.fromkeys(PRECISION_COLUMNS)
    if not measured:
        return out
    worst = max(measured, key=lambda st: st["rms"] / st["bound"])
    out.update({"precision_rms": worst["rms"], "precision_honest_rms": worst["honest_rms"],
                "precision_bound": worst["bound"]})
    for stat in ("tail", "low", "rel"):  # the group closest to its bound, for each statistic
        groups = [st for st in measured if st.get(stat) is not None]
        if groups:
            w = max(groups, key=lambda st: st[stat] - st[f"{stat}_bound"])
            out.update({f"precision_{stat}": w[stat], f"precision_{stat}_bound": w[f"{stat}_bound"]})
    return out


#: The observation's precision columns (kernelsynth/store.py).
PRECISION_COLUMNS = ("precision_rms", "precision_honest_rms", "precision_bound", "precision_tail",
                     "precision_tail_bound", "precision_low", "precision_low_bound", "precision_rel",
                     "precision_rel_bound")


def oracle(p: JobRequest) -> Dict[str, Any]:
    """The independent references (kernelsynth/audit.py): for every key of
    :func:`kernelsynth.audit.expected_keys` of an evaluate request ``p``, the reference output of
    that shape and trial, built from the same seeds as the candidate's worker, as
    ``{key: {"where": "shape 3x5, trial 4", "digest": digest}}`` under ``references``, and under
    ``reference_ops`` the sorted aten operator names one call of the reference dispatches (on
    the last listed shape). Each trial's reference module is built from that trial's parameter
    seed (:func:`kernelsynth.verify.params.build_seed`), as in the candidate's worker. After each
    fresh key (the staleness check's step 2) the staleness check's later steps are replayed on the
    same tensors, in order, from the same generator (:func:`kernelsynth.verify.protocol.later_steps`),
    each a key of group ``later``. Run before any candidate, in a worker that has imported no
    candidate code."""
    from .audit import expected_keys

    device, dtype = torch.device(p.device), _dtype(p.dtype)
    ref_mod = import_file(p.reference)
    refs: Dict[str, Any] = {}
    honest = HonestReferences(p.precision, dtype) if p.comparison == "allclose" else None
    slack_of = VerifyPolicy(dtype=dtype, device=device, seed=p.seed, comparison=p.comparison,
                            precision=p.precision, reduction=_reduction(p)).slack
    reached: Dict[tuple, Dict[str, int]] = {}

    def entry(model, inputs, ref, where, shape, probe, special, t) -> Dict[str, Any]:
        """One key's reference: its digest and, under a precision policy, the rule's terms."""
        out: Dict[str, Any] = {"where": where, "digest": digest(ref, p.comparison)}
        if probe:  # its tolerance (the parent compares with it: kernelsynth/audit.py)
            out["tol"] = probe_tolerance(p.tol, probe)
        if honest is not None:  # the expected output dtype and the precision rule's terms (VERIFICATION.md rule 23)
            terms = honest.terms(model, inputs, ref)
            out["dtype"] = str(terms["dtype"])
            if terms["scale"] is not None and probe_has_precision(probe) and not (special == "nonfinite" and t == 1):
                # as the worker's (rule 23; not on the trial with NaN/Inf planted, rule 8)
                slack = slack_of(shape, probe["rtol"] if probe else 1.0)
                out["scale"] = digest(terms["scale"], "allclose")
                sums = trial_sums(audit_view(ref.to(terms["dtype"])), audit_view(ref), audit_view(terms["scale"]),
                                  [audit_view(h) for h in terms["honest"]], slack=slack,
                                  linear=bool(terms.get("linear")), room=headroom(honest.policy),
                                  relative=relative_threshold(honest.policy, terms["dtype"]))  # as the parent sees them
                out.update({k: sums[k] for k in ("honest", "honest_tail", "ref_low", "threshold", "honest_rel",
                                                 "rel_threshold")})
                # where an honest output is in the lower format too: the parent's lower-format count
                # leaves those elements out, as the worker's does (session 27: without it the audit
                # rejected honest TF32 attention on one-key rows that the worker had accepted)
                low = honest_low_mask(terms["honest"], ref.shape)
                if low is not None:
                    out["honest_low"] = digest(low.to(torch.uint8), "allclose")
                out["slack"] = sums["slack"]
                # the relative tail's slack, element by element (kernelsynth/verify/precision.py: trial_sums)
                out["acc_slack"], out["linear"] = slack, bool(terms.get("linear"))
        return out

    for key, (shape, t, special) in expected_keys(p).items():
        group, si, _ = parse_audit_key(key)
        fresh = group == FRESH_GROUP  # the staleness check's call on trial 0's overwritten input
        group = "listed" if fresh else group
        seed, perturb = build_seed(p.seed, group, si, t)  # as the candidate's worker builds them
        init = init_inputs(ref_mod, shape, seed)
        perturb = probe_perturb(p.probes, group) or perturb
        probe = p.probes[int(group[len("probe"):])] if group.startswith("probe") else None
        later = []  # the staleness check's later steps, after a fresh key: (key, inputs, reference, what)
        try:
            model = _reference(ref_mod, init, device, dtype, seed, perturb)
            inputs, gen = trial_inputs(ref_mod.get_inputs, shape, si, t, p.seed, dtype, device, special, probe)
            if fresh:  # as check_repeat_and_fresh overwrites it, from the same generator, on the same copies
                which, plant = fresh_plan(p.verify_shapes, si)
                inputs = staleness_copies(inputs)
                exchange = refresh_inputs(inputs, ref_mod.get_inputs, shape, dtype, device, gen, which, plant)
                steps_from = [x.clone() for x in inputs]
            ref = run_reference(model, inputs, p.comparison, dtype)
            if fresh:  # then steps 3-5, replayed in order on the same tensors (later_steps draws from gen)
                for k, (changes, what) in enumerate(later_steps(
                        steps_from, gen, exchange, p.tol, p.comparison, last_only=si % 2 == 1, nudge=si % 2 == 0,
                        which=which, rounds=len(p.verify_shapes) // 2)):
                    apply_changes(steps_from, changes())
                    changed = [x.clone() for x in steps_from]
                    later.append((audit_key(LATER_GROUP, si, k), changed,
                                  run_reference(model, changed, p.comparison, dtype), what))
        except Exception as e:  # the task's own reference: name the shape (a derived one may break a rule)
            if (group, si) == ("listed", 0):  # the spec's own first shape breaks no rule: the reference is broken
                hint = "the spec's first listed shape: the reference itself fails (its Model, get_init_inputs or get_inputs)"
            else:
                hint = "if the task cannot take this shape, state the rule in the spec's constraints: (e.g. {H: {min: 2}})"
            raise RuntimeError(f"on shape {shape_label(shape)} ({group} shapes): {type(e).__name__}: {e} -- "
                               f"{hint}") from e
        _check_reach(reached, shape, init, inputs)
        where = f"shape {shape_label(shape)}, trial {t}" + (f" (input-range probe {group})" if probe else "")
        refs[key] = entry(model, inputs, ref, where + (" (the staleness check's call after the input was overwritten "
                                                       "in place)" if fresh else ""), shape, probe, special, t)
        for later_key, changed, later_ref, what in later:
            refs[later_key] = entry(model, changed, later_ref, f"{where} (the staleness check's call {what})", shape,
                                    None, special, t)
    # the aten ops one call of the reference dispatches (the parent merges them into reference_ops)
    return {"references": refs, "reference_ops": _reference_dispatch(ref_mod, p, device, dtype, p.verify_shapes[-1],
                                                                     "aten-ops")}


def _check_reach(reached: Dict[tuple, Dict[str, int]], shape: Dict[str, int], init: list, inputs: list) -> None:
    """Raise RuntimeError when ``shape`` gives the reference the same inputs (tensor shapes and
    dtypes, other values: :func:`kernelsynth.verify.inputs.reach`) as another shape already in
    ``reached`` (``{reach: shape}``, updated): its ``get_inputs``/``get_init_inputs`` ignore the
    dims that differ, so every ragged, large or residue shape of VERIFICATION.md rule 12 is one
    problem under many names (session 23's attack D4: such a spec verified one shape and was
    accepted)."""
    seen = reached.setdefault((reach(init), reach(inputs)), shape)
    if seen != shape:
        dims = ", ".join(d for d in shape if shape[d] != seen.get(d)) or "?"
        raise RuntimeError(f"on shape {shape_label(seen)} and shape {shape_label(shape)}: the reference gets the same "
                           f"inputs and Model arguments at both -- its get_inputs/get_init_inputs ignore {dims}, so the "
                           "verify shapes would test one size under several names; every dim of a shape must reach "
                           "the reference")


#: With no work model in the spec (``JobRequest.timed_fresh`` None), the timed calls get fresh
#: inputs when the timing shape's inputs take at most this many bytes (VERIFICATION.md rule 15).
FRESH_TIMED_BYTES = 256 << 20


def _reference_dispatch(ref_mod, p: JobRequest, device: torch.device, dtype: torch.dtype, shape=None,
                        label: str = "dispatch-ops") -> List[str]:
    """The aten operators one call of the reference dispatches at ``shape`` (default the first
    listed shape; inputs seeded by ``label``): the oracle's ``reference_ops`` (at the last listed
    shape), and in an evaluate job, before the candidate is imported, the operators whose kernels
    are guarded (rule 13, :func:`kernelsynth.verify.guard.dispatch_tables`)."""
    if shape is None:
        if not p.verify_shapes:
            return []
        shape = p.verify_shapes[0]
    gen = torch.Generator(device=device).manual_seed(trial_seed(p.seed, label))
    return aten_ops_of(_reference(ref_mod, init_inputs(ref_mod, shape), device, dtype),
                       ref_mod.get_inputs(shape, dtype, device, gen), device)


def _unverified_precision(ref_model, p: JobRequest, policy: VerifyPolicy, shape=None, memo=None):
    """``check(out, inputs, ref, terms=None) -> terms``: the precision rule (VERIFICATION.md rule
    23) on the output of a call the harness did not verify -- a timed call, the kernel census's
    profiled call -- against the honest computations on its own ``inputs`` (``terms``: reuse those
    of an earlier check on the same inputs). Raises VerificationFailure like a verified trial. A
    candidate that computes at the policy only where it can tell it is verified (the poisoning
    mode's sentinel in ``torch.empty``: tests/adversarial/redteam_s11 cw1, float16 operands in every
    other call) meets the rule on the calls that are timed (session 11). A no-op without a policy
    (``exact`` tasks: their timed outputs are compared bit for bit). ``memo``: the worker's reference
    memo, for calls whose inputs every candidate meets (the profiled call's; not the timed ones)."""
    if p.comparison != "allclose" or not policy.precision:
        return lambda out, inputs, ref, terms=None: None
    honest = HonestReferences(policy.precision, policy.dtype)

    def check(out, inputs, ref, terms=None):
        if not isinstance(out, torch.Tensor) or not out.is_floating_point():
            return terms
        terms = terms or honest.terms(ref_model, inputs, ref, memo)
        meter = PrecisionMeter(policy.precision)
        meter.add(out, ref, terms, slack=policy.slack(shape or p.timing_shape, 1.0))
        meter.check("precision of an unverified call")
        return terms
    return check


def _time(model, ref_model, ref_mod, p: JobRequest, policy: VerifyPolicy, is_own=None,
          out_dtype=None, profiled: Optional[set] = None, models_for=None,
          out_strides: Optional[tuple] = None) -> Dict[str, Any]:
    """Time the model at the timing shape, then check the output of the last timed call and of one
    earlier timed call at an index drawn from the seed (3 to 42: inside do_bench's loop, so a
    candidate that detects the benchmark and then does less work is caught even if it is right
    again at the end). Right before that probe call, one element and a small region of every input
    are changed in place (:func:`kernelsynth.verify.inputs.plan_changes`, drawn before timing),
    and before every timed call one element of every input gets a new value
    (:func:`kernelsynth.verify.inputs.plan_rolling`): no two timed calls see the same input, so an
    answer memoised on the whole input is never a hit. With ``p.timed_fresh`` (a compute-bound
    task: :func:`kernelsynth.contract.timed_fresh`; None: inputs of at most
    :data:`FRESH_TIMED_BYTES`) every timed call instead gets a fresh draw of ``get_inputs`` copied
    into its input tensors, so a candidate that keeps state across calls and recomputes only what
    changed (tests/adversarial/redteam_s8 mm1: one row and one or two columns per rolling change)
    has to redo the whole work: the draw and the copy (about 3x the input bytes of memory traffic)
    replace the rolling write, outside the timed region, before the L2 clear. These writes run before the L2 clear,
    outside the timed region (:func:`kernelsynth.timing.bench`). The probe's and the last call's
    outputs must follow them, each against the reference of the input it was given (VERIFICATION.md
    rules 10 and 15). The timing (do_bench and its synchronised calls) holds the GPU's lock
    exclusive: no other kernelsynth process's GPU job runs beside it (kernelsynth/gpulock.py).

    ``is_own``: the candidate's own-kernel predicate (:meth:`kernelsynth.backends.Backend.own_kernels`);
    on a GPU one more call then runs under ``torch.profiler``
    (:func:`kernelsynth.verify.census.kernel_census`; its output is checked too) and
    ``foreign_kernels`` lists the kernels of library operators or of no own code (rule 14).
    ``out_dtype``: the expected output dtype and ``out_strides`` the reference's strides at the dtype
    under test (the timing-shape verification's). ``profiled``: a
    set receiving the CPU operators the profiled call recorded (rule 14)."""
    dtype, device = policy.dtype, policy.device
    gen = torch.Generator(device=device).manual_seed(trial_seed(p.seed, "timing"))
    inputs = list(ref_mod.get_inputs(p.timing_shape, dtype, device, gen))
    shadow = [x.clone() for x in inputs]  # what the inputs should hold: the harness's own copy
    changes = plan_changes(inputs, gen, False) + plan_changes(inputs, gen, True)
    rolling = plan_rolling(inputs, gen)
    last, probe = [None], {"n": 0, "at": 3 + trial_seed(p.seed, "timed-probe") % 40, "out": None, "state": None}
    step = [0]
    fresh = p.timed_fresh
    if fresh is None:  # no work model in the spec: fresh inputs when they are cheap to draw
        fresh = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor)) <= FRESH_TIMED_BYTES

    def before():  # untimed: every call sees a new input (rule 15); the probe's also the changes
        if fresh:  # a new draw, copied into the tensors the candidate is given; the draw is the harness's copy
            shadow[:] = list(ref_mod.get_inputs(p.timing_shape, dtype, device, gen))
            for x, f in zip(inputs, shadow):
                if isinstance(x, torch.Tensor):
                    x.data.copy_(f)  # through .data, as every change: no version bump
        if probe["n"] + 1 == probe["at"]:
            apply_changes(inputs, changes)
            apply_changes(shadow, changes)
        if not fresh:
            apply_rolling(inputs, rolling, step[0])
            apply_rolling(shadow, rolling, step[0])
        step[0] += 1
        if probe["n"] + 1 == probe["at"]:
            probe["state"] = [x.clone() for x in shadow]

    def call():  # besides the last one, one timed call at a seeded index is kept and checked
        last[0] = model(*inputs)
        probe["n"] += 1
        if probe["n"] == probe["at"] and isinstance(last[0], torch.Tensor):
            probe["out"] = last[0].clone()

    with torch.no_grad():
        with gpulock.exclusive():  # no other kernelsynth process's GPU job beside the timed calls
            t = timing.time_ms(call, p.warmup_ms, p.rep_ms, p.timing_repeats, before=before)
        if policy.guard is not None:  # the timed calls left no numeric setting changed (rule 13)
            check_numeric()
        ref = run_reference(ref_model, shadow, p.comparison, dtype)
        probe_ref = run_reference(ref_model, probe["state"], p.comparison, dtype) if probe["state"] else None
    if policy.guard is not None:
        check_integrity(policy.guard)
    precision = _unverified_precision(ref_model, p, policy)
    try:
        if policy.threads_before is not None:
            check_no_new_threads(policy.threads_before)
        compare(last[0], ref, p.comparison, policy.tol, out_dtype, out_strides)
        terms = precision(last[0], shadow, ref)
    except VerificationFailure as e:
        raise VerificationFailure(f"output of the last timed call: {e}") from None
    if probe["out"] is not None or probe["n"] >= probe["at"]:
        try:
            compare(probe["out"], probe_ref, p.comparison, policy.tol, out_dtype, out_strides)
            precision(probe["out"], probe["state"], probe_ref)
        except VerificationFailure as e:
            raise VerificationFailure(f"output of timed call {probe['at']} (of {probe['n']}, one element and a small "
                                      f"region of the input changed right before it): {e}") from None
    res = {"median_ms": t["median_ms"], "p20_ms": t["p20_ms"], "p80_ms": t["p80_ms"],
           "timing_spread": t["spread"], "synced_ms": t["synced_ms"]}
    if is_own is not None and device.type == "cuda":
        census_inputs = [x.clone() for x in shadow]  # the inputs as the last timed call had them
        got, foreign = kernel_census(model, census_inputs, device, is_own, p.reference_ops or [], profiled)
        try:
            compare(got, ref, p.comparison, policy.tol, out_dtype, out_strides)
            precision(got, census_inputs, ref, terms)
        except VerificationFailure as e:
            raise VerificationFailure(f"output of the profiled call (kernel census): {e}") from None
        if policy.guard is not None:
            check_integrity(policy.guard)
        res["foreign_kernels"] = None if foreign is None else (",".join(foreign) or None)
        res["kernel_census"] = foreign is not None
    _unwatched_scale_probes(model, ref_model, p, policy, shadow, gen, out_dtype, out_strides, models_for=models_for,
                            shape=p.timing_shape)
    return res


def _unwatched_scale_probes(model, ref_model, p: JobRequest, policy: VerifyPolicy, inputs, gen, out_dtype, out_strides=None,
                            where: str = "the timing shape", models_for=None, shape=None, si: int = 0,
                            memo=None) -> None:
    """Each fixed ``scale`` probe of the spec (VERIFICATION.md rule 24) once more at the timing
    shape (on the CPU path, which times nothing: the last listed shape, after the profiled call),
    as a plain call like the timed ones -- no poisoning mode, no census -- on the last
    timed call's inputs times the probe's factor (the parameters as built: an input-only scale),
    compared with the float64 reference on them under the probe's tolerance; a probe that also
    scales the parameters (``params: true``) gets a fresh pair from ``models_for(shape, "probe<k>",
    si, 0)``, built as that probe's verified trials are (its tolerance assumes both). A candidate that
    keeps to the policy only where it can tell it is verified (redteam_s11 cw1: float16 operands
    when ``torch.empty`` does not hold the poisoning sentinel) overflows here as it would under
    the probe. Ranged probes (compared only, a factor per trial) and the other kinds are left to
    the verified trials. ``memo``: as :func:`_unverified_precision`'s. Raises VerificationFailure naming the
    probe."""
    for k, probe in enumerate(p.probes):
        if probe.get("kind") != "scale" or "low" in probe:
            continue
        cand, reference = model, ref_model
        if probe.get("params"):
            if models_for is None:
                continue
            cand, reference = models_for(shape, f"probe{k}", si, 0)
        scaled = apply_probe([x.clone() if isinstance(x, torch.Tensor) else x for x in inputs], probe, gen)
        pristine = [x.clone() if isinstance(x, torch.Tensor) else x for x in scaled]
        with torch.no_grad():
            out = cand(*scaled)
            ref = run_reference(reference, pristine, p.comparison, policy.dtype, memo)
        try:
            compare(out, ref, p.comparison, probe_tolerance(policy.tol, probe), out_dtype, out_strides)
        except VerificationFailure as e:
            what = "the inputs and parameters" if probe.get("params") else "the inputs"
            raise VerificationFailure(f"an unverified call at {where} with {what} times "
                                      f"{probe['value']:g} (input-range probe, outside the poisoning mode): {e}") from None
