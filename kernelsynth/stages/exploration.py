"""Exploration: build, verify, time and profile every candidate x config x dtype.

Input: a :class:`~kernelsynth.spec.TaskSpec` and the resolved :class:`~kernelsynth.hardware.Hardware`.
Output: observation rows (:data:`kernelsynth.store.OBSERVATION_SCHEMA`), one per attempt, failures
included with their fault class and reason, appended to ``<run dir>/observations/`` as each
completes. Work whose content key is already on disk is skipped (a re-run resumes).
The contract is references/EXPLORATION.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .. import __version__, backends
from .. import gpulock, inductor, profiling
from ..audit import audit_problem  # no torch at import; a call imports it (CPU tensors only)
from ..cache import CompileCache
from ..ceilings import correct as correct_ceilings, derive, same_hardware
from ..config import ExplorationConfig as _D  # the defaults, written once
from ..contract import (CandidateRef, EvaluateResult, Fault, JobRequest, ProfileRequest, profile_columns, result_columns,
                        timed_fresh)
from ..devices import Device, device_report, distinct, parent_visible_devices, parse_workers, plan_slots
from ..hardware import Hardware, apply_ceilings, ceiling_lines, ceilings_entry
from ..errors import UserError, reference_error
from ..tolerance import op_class
from ..external import ExternalCandidate, load_external
from ..sandbox import Sandbox, SandboxSettings
from ..spec import DTYPE_ITEMSIZE, TaskSpec, merge_reference_ops, probes_for
from ..screen import screen_source
from ..shapes import (EXTREME_PLAN, HUGE_COPIES, HUGE_ELEMENTS, HUGE_MEMORY_FRACTION, JOINT_PLAN, LARGE_DIM_PLAN,
                      RESIDUE_PLAN, derived_shapes, even_shape, extreme_shapes, huge_shape, joint_shapes, large_dim_shapes,
                      residue_shapes)
from ..store import ObservationStore, schema_mismatches
from ..workers import JobResult, WorkerPool

log = logging.getLogger(__name__)


@dataclass
class Job:
    """One attempt to run: what the worker gets (``request``, final: ``key`` is its
    :meth:`~kernelsynth.contract.JobRequest.key`) and the observation's identity (``row``)."""

    key: str
    row: Dict[str, Any]
    request: JobRequest

    @property
    def label(self) -> str:
        r = self.row
        name = "" if r["name"] == r["version"] else f" {r['name']}"  # external candidates: one name
        return f"{r['version']}{name} {r['dtype']} {r['config']}"


class Exploration:
    """See module docstring; settings are documented in conf/exploration/default.yaml."""

    def __init__(self, trials: int = _D.trials, timing_shape_trials: int = _D.timing_shape_trials,
                 seed: int = _D.seed, warmup_ms: float = _D.warmup_ms, rep_ms: float = _D.rep_ms,
                 timing_repeats: int = _D.timing_repeats, timeout_s: float = _D.timeout_s,
                 workers: Any = _D.workers, interpreter_max_configs: int = _D.interpreter_max_configs,
                 baselines: bool = _D.baselines, progress: bool = _D.progress,
                 extra_candidates: Optional[List[str]] = None, fresh_worker: str = _D.fresh_worker,
                 screen_sources: bool = _D.screen_sources, sandbox: Any = None, profile: bool = _D.profile,
                 profile_timeout_s: float = _D.profile_timeout_s, profile_budget_s: float = _D.profile_budget_s,
                 ncu: Optional[str] = _D.ncu, sources: Optional[List[str]] = None,
                 reference_memo: bool = _D.reference_memo, reference_timeout_s: float = _D.reference_timeout_s):
        if trials < 1:
            raise ValueError("exploration.trials must be at least 1")
        self.trials, self.timing_shape_trials, self.seed = trials, timing_shape_trials, seed
        self.warmup_ms, self.rep_ms, self.timing_repeats = warmup_ms, rep_ms, timing_repeats
        self.timeout_s, self.workers = timeout_s, workers
        self.reference_timeout_s = min(float(reference_timeout_s), float(timeout_s))
        parse_workers(workers)  # a bad value fails here, before any work
        #: the worker slots to use instead of planning them from the probe's devices (tests)
        self.slots: Optional[List[Optional[Device]]] = None
        self._device_ceilings: Dict[int, Dict[str, Any]] = {}
        self.interpreter_max_configs, self.baselines, self.progress = interpreter_max_configs, baselines, progress
        self.extra_candidates = list(extra_candidates or [])
        self.sources = list(_D().sources if sources is None else sources)
        unknown = [x for x in self.sources if x not in inductor.SOURCES]
        if unknown:
            raise ValueError(f"exploration.sources: unknown source(s) {unknown}; known: {list(inductor.SOURCES)}")
        if fresh_worker not in ("external", "always"):
            raise ValueError(f"exploration.fresh_worker must be 'external' or 'always', got {fresh_worker!r}")
        self.fresh_worker = fresh_worker
        self.reference_memo = bool(reference_memo)
        self.screen_sources = screen_sources
        self.sandbox = SandboxSettings.of(sandbox)
        #: the last run's compile cache report (run.json ``compile_cache``; kernelsynth/cache.py)
        self.cache_report: Optional[Dict[str, Any]] = None
        self.sandbox_report: Optional[Dict[str, Any]] = None  # the jobs' sandbox (Sandbox.to_dict), for run.json
        self.profile, self.profile_timeout_s, self.profile_budget_s = profile, profile_timeout_s, profile_budget_s
        self.ncu = ncu
        #: no worker of this run has imported the spec's reference yet (run's check_reference, until checked)
        self._reference_unchecked = False

    # ------------------------------------------------------------------ planning
    def plan(self, spec: TaskSpec, hw: Hardware, external: Optional[List[ExternalCandidate]] = None,
             cache_dir: Optional[Path] = None, generated: Optional[Dict[str, Any]] = None) -> List[Job]:
        """Every job of the run, in a stable order: dtype, then the baselines (eager,
        torch.compile: first, so that a run stopped by a time limit has what its candidates are
        compared with; on the H200 the catalog's runs stopped at 55-60 s lost torch.compile), then
        candidates (v0..vN; only v0 when ``ladder`` is not among the sources), then the generated candidate of that dtype
        (``generated[dtype]``, a :class:`kernelsynth.inductor.GeneratedCandidate`; role and version
        ``inductor``), then external candidates (``role="external"``, one job each, no tunables).
        ``cache_dir``: where workers cache compiled kernels (not part of the key)."""
        timed = not hw.interpret and spec.timing_shape is not None
        listed = spec.interpret_shapes if hw.interpret else spec.verify_shapes
        # on the interpreter one fresh random shape gives its place to the joint shape (same count)
        derived = derived_shapes(listed, self.seed, fresh=1 if hw.interpret else 2,
                                 constraints=spec.constraints) if spec.derived_shapes else []
        if spec.derived_shapes:  # every dim large and ragged in some shape, and dims large together (rule 12)
            target = "interpret" if hw.interpret else "gpu"
            high, budget = LARGE_DIM_PLAN[target]
            derived += joint_shapes(listed + derived, self.seed, joint_fits(spec, listed, JOINT_PLAN[target]), high,
                                    pairs=not hw.interpret, constraints=spec.constraints, within_listed=hw.interpret)
            derived += large_dim_shapes(listed + derived, self.seed, high, budget, constraints=spec.constraints,
                                        pack=not hw.interpret)
            # every dim large at residues 1, 2 mod 4 and 4 mod 8 (the interpreter: odd and one other, RESIDUE_PLAN),
            # mostly by moving values already drawn; the shapes added for the rest within the joint shapes'
            # budget (GPU, packed) or of about 300-4100 elements, one large dim each (the interpreter: above
            # every listed value)
            fits = ((lambda s: math.prod(s.values()) <= budget) if hw.interpret
                    else joint_fits(spec, listed, JOINT_PLAN[target]))
            derived = residue_shapes(listed, derived, self.seed, high, fits, constraints=spec.constraints,
                                     above_listed=hw.interpret, pack=not hw.interpret, cover=RESIDUE_PLAN[target])
            if hw.interpret:  # every dim even (2 mod 4) and past 16 where it fits, then every dim a power of 2
                limit = max(math.prod(s.values()) for s in listed)  # within the listed elements
                for aligned in (False, True):
                    even = even_shape(listed, self.seed, limit, spec.constraints, aligned=aligned)
                    derived += [even] if even is not None and even not in listed + derived else []
            if not hw.interpret:  # GPU only: 8 mod 16 ... 256 mod 1024 and a value past 2^16 per dim, packed
                seen = listed + derived + ([spec.timing_shape] if spec.timing_shape else [])
                derived += extreme_shapes(seen, self.seed, joint_fits(spec, listed, EXTREME_PLAN[target]),
                                          constraints=spec.constraints)
        jobs = []
        dtypes = spec.dtypes
        if hw.interpret and spec.interpret_dtypes is not None:
            dtypes = spec.interpret_dtypes
        for dtype in dtypes:
            work = spec.work_model(spec.timing_shape, dtype) if spec.timing_shape else {"bytes": None, "flops": None}
            entries: List[CandidateRef] = []
            ladder = spec.candidates if "ladder" in self.sources else spec.candidates[:1]
            for cand in ladder:
                if hw.interpret and backends.get(cand.backend).needs_gpu:
                    continue  # e.g. native CUDA; CI compiles those sources with nvcc instead
                configs = cand.configs()
                if hw.interpret:  # the spec's interpreter settings, under the user's pins
                    configs = cand.interpreter_configs(spec.interpret_tunables, spec.pinned,
                                                       self.interpreter_max_configs)
                for cfg in configs:
                    entries.append(CandidateRef("candidate", cand.version, cand.name, cand.backend, str(cand.file),
                                                cfg, cand.launch))
            gen = (generated or {}).get(dtype)
            if gen is not None:
                entries.append(CandidateRef("inductor", inductor.VERSION, gen.name, gen.backend, str(gen.file)))
            for ext in external or []:
                entries.append(CandidateRef("external", ext.name, ext.name, "external", str(ext.file)))
            if self.baselines and timed:  # first: a run stopped early still has its points of comparison
                entries[:0] = [CandidateRef("baseline", b, b, "torch", None) for b in spec.baselines]
            for e in entries:
                # fresh ragged shapes from the seed, and one above 4096 (VERIFICATION.md rule 12); not
                # for the trusted baselines: torch.compile(dynamic=False) recompiles per shape and
                # falls back to eager past dynamo's recompile limit (8)
                extra = derived + huge_shapes(spec, hw, dtype) if not e.trusted else []
                request = JobRequest(
                    reference=str(spec.reference), candidate=e,
                    backend_source=None if e.trusted else backends.source(e.backend), dtype=dtype,
                    verify_shapes=listed, derived_shapes=extra, timing_shape=spec.timing_shape if timed else None,
                    time=timed, trials=self.trials, timing_shape_trials=self.timing_shape_trials, seed=self.seed,
                    comparison=spec.comparison, tolerance=spec.tolerance,
                    determinism=(spec.determinism or {}).get(dtype),
                    warmup_ms=self.warmup_ms, rep_ms=self.rep_ms, timing_repeats=self.timing_repeats,
                    device=hw.device, arch=hw.arch, reference_ops=spec.reference_ops, interface=spec.interface,
                    fresh_worker=self.fresh_worker == "always" or e.role in ("external", "inductor"),
                    cache_dir=str(cache_dir) if cache_dir is not None else None, precision=spec.policy(dtype),
                    data_movement=op_class(spec.category) == "data_movement",
                    probes=[] if e.trusted else probes_for(spec.probes, dtype), reduction=spec.reduction,
                    timed_fresh=timed_fresh(work) if timed else None,
                    nonfinite=spec.nonfinite and not e.trusted, reference_memo=self.reference_memo)
                key = request.key(spec=spec.sha256, hw=hw.fingerprint, kernelsynth=__version__)
                row = {
                    "key": key, "task": spec.name, "spec_sha256": spec.sha256, "role": e.role,
                    "version": e.version, "name": e.name, "backend": e.backend,
                    "config": json.dumps(e.config, sort_keys=True), "dtype": dtype,
                    "verify_shapes": json.dumps(listed + extra),
                    "timing_shape": json.dumps(spec.timing_shape) if timed else None,
                    "bytes": work["bytes"], "flops": work["flops"], "device": hw.device_name,
                    "hw_fingerprint": hw.fingerprint, "interpret": hw.interpret,
                    "precision_policy": request.precision,
                }
                jobs.append(Job(key, row, request))
        return jobs

    # ------------------------------------------------------------------ running
    def run(self, spec: TaskSpec, hw: Hardware, store: ObservationStore, cache_dir: Path,
            console=None, hidden: Sequence[str] = (), check_reference: bool = False) -> List[Dict[str, Any]]:
        """Run every planned job not yet on disk; return all observations of the run directory.
        ``hidden``: folders hidden from workers besides the run directory (a sweep's folder).
        ``check_reference``: no worker has imported the spec's reference yet (an interpreter run, whose
        hardware needs no probe worker: kernelsynth/engine.py): the first pool's first job does
        (the ``probe`` job), before anything else runs. Raises SpecError (kernelsynth.errors.reference_error)
        when it does not import, lacks Model/get_init_inputs/get_inputs, or ends the worker that
        imports it (a crash, ``os._exit``, a hang past ``reference_timeout_s``)."""
        self._reference_unchecked = check_reference
        if self.extra_candidates and "external" not in self.sources:
            log.warning("exploration.extra_candidates ignored: 'external' is not in exploration.sources %s", self.sources)
        external = load_external(self.extra_candidates, store.dir.parent) if "external" in self.sources else []
        cache_dir = Path(cache_dir).expanduser().resolve()  # the path workers see it at (bound in the sandbox)
        jobs = self.plan(spec, hw, external, cache_dir)
        skipped = [f"{c.version} (backend {c.backend})" for c in spec.candidates
                   if hw.interpret and backends.get(c.backend).needs_gpu]
        if skipped:
            log.warning("skipping %s: needs a GPU (the interpreter runs Triton and PyTorch only)", ", ".join(skipped))
        for event in store.verify("resume"):  # a file the run did not write is measured again
            log.warning("untrusted observation file set aside, its job re-runs: %s (%s)", event["file"], event["problem"])
        env = {"TRITON_INTERPRET": "1"} if hw.interpret else {}
        extensions = os.environ.get("TORCH_EXTENSIONS_DIR", str(cache_dir / "torch_extensions"))
        env |= {"KERNELSYNTH_CACHE": str(cache_dir), "TORCH_EXTENSIONS_DIR": extensions}
        if not hw.interpret:  # each GPU's lock: timed regions run alone on their GPU (kernelsynth/gpulock.py)
            try:
                gpulock.prepare(cache_dir, [d.get("uuid") for d in hw.devices])
            except OSError as e:
                log.warning("GPU locks not prepared in %s (%s): timings are not guarded against other runs' GPU "
                            "work", cache_dir, e)
        generated_dir = store.run_dir / inductor.FOLDER
        if "inductor" in self.sources:
            generated_dir.mkdir(parents=True, exist_ok=True)
        sandbox = self.sandbox_for(jobs, store.run_dir, [extensions], gpu=not hw.interpret, cache=cache_dir, hidden=hidden,
                                   extra_readable=[str(generated_dir)] if "inductor" in self.sources else [])
        slots = self.slots if self.slots is not None else plan_slots(self.workers, hw.devices, hw.fingerprint,
                                                                      parent_visible_devices())
        devices = distinct(slots)
        if "inductor" in self.sources:
            generated = self._generate(spec, hw, store, env, sandbox, cache_dir, devices[0] if devices else None)
            jobs = self.plan(spec, hw, external, cache_dir, generated)
        # sandboxed, workers read the shared cache and stage new entries; the parent promotes them
        cache = CompileCache(cache_dir, sandboxed=sandbox.active)
        # run.json's "sandbox" is this one (the probe's folders differ: a candidate file of mode 0600
        # keeps these workers at uid 0 where the probe's dropped it, tests/adversarial/sandbox_s7 uid_claim)
        self.sandbox_report = sandbox.to_dict()
        if sandbox.active and os.geteuid() == 0 and not sandbox.drop_uid:
            log.warning("jobs' sandbox: %s", sandbox.status)
        if external and not sandbox.active and not self.sandbox.allow_unsandboxed_external:
            raise UserError(f"refusing to run external candidates without the sandbox ({sandbox.problem}): they would "
                            "run with this user's files, credentials and network. Install bubblewrap (or set "
                            "exploration.sandbox.bwrap), or accept the risk with "
                            "exploration.sandbox.allow_unsandboxed_external=true (SECURITY.md)")
        if external and sandbox.active and os.geteuid() == 0 and not sandbox.drop_uid \
                and not self.sandbox.allow_unsandboxed_external:
            # uid 0 without capabilities still owns root's files: every one not hidden is readable
            raise UserError(f"refusing to run external candidates in a sandbox that keeps uid 0 ({sandbox.status}): "
                            "they could read every root-owned file that is not hidden (tests/adversarial/sandbox_s6 "
                            "uid0_fallback). Make the files it names readable by other users, or accept the risk "
                            "with exploration.sandbox.allow_unsandboxed_external=true (SECURITY.md)")
        rows: List[Dict[str, Any]] = []
        with WorkerPool(env=env, timeout_s=self.timeout_s, sandbox=sandbox, cache=cache, slots=slots,
                        check={"cuda": not hw.interpret} if devices else None) as pool:
            self._check_reference(pool, spec)
            if devices:
                log.info("exploration: %d worker(s) on %s", len(slots), ", ".join(d.label for d in devices))
            if not hw.interpret:
                self._ceilings(pool, hw, devices, cache_dir)
                for line in ceiling_lines(hw):
                    log.info(line)
            for attempt in range(2):  # a second pass re-runs jobs whose files failed at consolidation
                todo = [j for j in jobs if not store.has(j.key)]
                if attempt == 0 and len(todo) < len(jobs):
                    log.info("resuming: %d of %d observations already on disk", len(jobs) - len(todo), len(jobs))
                if todo:
                    references = self._references(pool, todo, devices)
                    self._run_jobs(pool, todo, hw, store, console, references, devices)
                n_events = len(store.events)
                rows = store.read(verify=True, at="consolidation")
                for event in store.events[n_events:]:
                    log.warning("untrusted observation file set aside at consolidation: %s (%s)",
                                event["file"], event["problem"])
                if len(store.events) == n_events:
                    break
            rows, foreign = same_hardware(rows, hw.fingerprint)
            if foreign:
                log.warning("%d observation(s) of this run directory were measured on another device, driver or "
                            "library fingerprint than %s: left out of this run's results (their files are kept)",
                            foreign, hw.fingerprint)
            retired = dict(pool.retired)
            _warn_unlocked(pool)
        lead = next((d for d in devices if d.index not in retired), None)
        rows = self._profile(spec, hw, store, rows, jobs, env, sandbox, lead)
        hw.devices = device_report(hw.devices, slots, retired, rows, self._device_ceilings)
        # Ceilings that are ceilings: a verified observation above one raises it (kernelsynth/ceilings.py);
        # the shards keep the columns as measured, the consolidated table and what follows use the raise.
        for c in correct_ceilings(hw, rows, spec.sha256):
            log.warning("ceiling raised: %s", c["what"])
        # One consolidated table for users and plots; the shards stay the source of truth for resume.
        store.write_consolidated(rows)
        self.cache_report = cache.report()
        c = self.cache_report
        log.info("compile cache %s: %d hits (%d in the shared cache), %d compiles; %d entries promoted, %d refused, "
                 "%d discarded", cache_dir, c["shared_hits"] + c["staged_hits"], c["shared_hits"], c["misses"],
                 c["promoted"], c["refused"], c["discarded"])
        for e in c["events"]:
            log.warning("compile cache: %s %s: %s", e["job"], e["entry"], e["problem"])
        return rows

    def _check_reference(self, pool: WorkerPool, spec: TaskSpec) -> None:
        """The reference check the engine's probe worker makes on a GPU run (:meth:`run`'s
        ``check_reference``), once per run, in ``pool``'s worker."""
        if not self._reference_unchecked:
            return
        res = pool.run("probe", {"reference": str(spec.reference)}, timeout_s=self.reference_timeout_s)
        self._reference_unchecked = False
        if not res.ok:  # the job only imports torch, triton and the reference: the reference ended its worker
            raise reference_error(spec, f"importing it ended the worker ({res.fault}: {res.error})")
        if res.value.get("reference_error"):
            raise reference_error(spec, res.value["reference_error"])

    def _ceilings(self, pool: WorkerPool, hw: Hardware, devices: List[Device], cache_dir: Path) -> None:
        """The measured ceilings (kernelsynth/hardware.py): per device, each measured once per device
        fingerprint (unpinned: the run's fingerprint) in a worker of that device; the run's are the
        best over its devices. A device whose measurement fails is retired (its jobs go to the
        others); raises RuntimeError when every one fails."""
        entries, errors = [], []
        self._device_ceilings = {}
        for d in devices or [None]:
            def measure(d=d):
                res = pool.run("ceilings", {"cache_dir": str(cache_dir)}, device=None if d is None else d.index)
                if not res.ok:
                    raise RuntimeError(f"measuring the ceilings failed ({res.fault}): {res.error}")
                return res.value
            try:
                entry = ceilings_entry(d.fingerprint if d else hw.fingerprint, hw.device_name, cache_dir, measure)
            except RuntimeError as e:
                if d is None:
                    raise
                errors.append(f"{d.label}: {e}")
                pool.retire(d.index, str(e).splitlines()[0][:500])
                continue
            entries.append((None if d is None else d.index, entry))
            if d is not None:
                self._device_ceilings[d.index] = entry
        if not entries:
            raise RuntimeError("measuring the ceilings failed on every device: " + " | ".join(errors))
        apply_ceilings(hw, entries)

    def _profile(self, spec: TaskSpec, hw: Hardware, store: ObservationStore, rows: List[Dict[str, Any]],
                 jobs: List[Job], env: Dict[str, str], sandbox: Sandbox,
                 lead: Optional[Device] = None) -> List[Dict[str, Any]]:
        """The profile step (kernelsynth/profiling.py): Nsight Compute on one call of each version's
        fastest verified config, in a fresh worker that timed nothing, after every timing; one ncu
        run per dtype profiles its versions in turn (``ProfileRequest.batch``). Each
        target's observation gets the ``profile`` and ``ncu_*`` columns; on a GPU its file is
        rewritten with them and kept on resume (kernelsynth/profiling.py, ``needs_profile``).
        Skipped, with the reason in ``profile``: without ncu or its permission, past
        ``profile_budget_s`` (written to the file too), without a GPU or with
        ``exploration.profile=false`` (the rows only: nothing was attempted)."""
        targets = [o for o in profiling.profile_targets(rows, spec.sha256) if profiling.needs_profile(o)]
        order = list(getattr(spec, "dtypes", []))  # the spec's first dtype is profiled first (under a budget)
        targets.sort(key=lambda o: (order.index(o["dtype"]) if o["dtype"] in order else len(order), o["version"]))
        if not targets:
            return rows
        requests = {j.key: j.request for j in jobs}
        reason = profiling.unattempted(hw.interpret, self.profile)
        if reason is not None:  # nothing to attempt: the rows say why, the files stay as they are
            profiling.mark_unattempted(rows, spec.sha256, reason)
            log.info("profile step skipped: %s", reason)
            return rows
        results: Dict[str, Dict[str, Any]] = {}
        todo = [o for o in targets if o["key"] in requests and requests[o["key"]].timing_shape]
        groups: List[List[Dict[str, Any]]] = []  # one ncu run per dtype: its versions in one batch
        for o in todo:
            if groups and groups[-1][0]["dtype"] == o["dtype"]:
                groups[-1].append(o)
            else:
                groups.append([o])
        most = max((len(g) for g in groups), default=1)
        started = time.monotonic()
        with WorkerPool(1, env=env, timeout_s=self.profile_timeout_s * most + 60, sandbox=sandbox,
                        slots=[lead] if lead else None) if todo \
                else contextlib.nullcontext() as pool:
            for group in groups:
                spent = time.monotonic() - started
                if spent > self.profile_budget_s:
                    for o in group:
                        results[o["key"]] = profiling.skipped(
                            f"the profile budget (exploration.profile_budget_s={self.profile_budget_s:.0f}) was spent")
                    continue
                reqs = [requests[o["key"]] for o in group]
                req = ProfileRequest(reqs[0], list(profiling.METRICS), self.ncu,
                                     min(self.profile_timeout_s * len(group), self.profile_budget_s - spent + 30),
                                     batch=reqs[1:])
                res = pool.run("profile", req)
                if not res.ok:
                    why = f"failed: profile job {res.fault}: {res.error.splitlines()[0] if res.error else ''}"[:1000]
                    outs = [{"profile": why} for _ in group]
                else:
                    outs = res.value["batch"] if req.batch else [res.value]
                for o, out in zip(group, outs):
                    results[o["key"]] = out
                    log.info("profile %s %s %s: %s", o["version"], o["dtype"], o["config"],
                             profiling.claim(dict(o, **out)) or out.get("profile"))
                missing = [out for out in outs if str(out.get("profile", "")).startswith(profiling.NCU_NOT_STARTED)]
                if missing:  # ncu missing: the same for every target of this run. A refusal is not carried over:
                    # the profiled programs share ncu's output, so each dtype's run finds its own (red team s35 C)
                    why = missing[0]
                    for rest in todo[todo.index(group[-1]) + 1:]:
                        results[rest["key"]] = dict(why)
                    break
        columns = profile_columns()
        by_key = {o["key"]: o for o in rows}
        for key, res in results.items():
            row = by_key[key]
            row.update({c: res.get(c) for c in columns})
            store.append(row)  # attempted on the GPU: kept with the observation (same key, new tag)
        return rows

    def sandbox_for(self, jobs: List[Job], run_dir: Path, private: List[str], gpu: bool,
                    cache: Optional[Path] = None, extra_readable: Optional[List[str]] = None,
                    hidden: Sequence[str] = ()) -> Sandbox:
        """The sandbox of this run's workers: the run directory hidden; the folders of the
        reference, of each candidate, of each backend loaded from a file and ``extra_readable``
        (the generated candidates' folder) readable; ``cache`` (the shared compile cache)
        read-only; ``private`` (the torch extensions folder) writable and private."""
        readable = {str(Path(j.request.reference).parent) for j in jobs} | set(extra_readable or [])
        readable |= {str(Path(j.request.candidate.file).parent) for j in jobs if j.request.candidate.file}
        readable |= {str(Path(j.request.backend_source).parent) for j in jobs  # a backend loaded from a file
                     if j.request.backend_source and j.request.backend_source.endswith(".py")}
        for d in private:
            Path(d).mkdir(parents=True, exist_ok=True)  # a mount point must exist on a read-only filesystem
        return Sandbox(self.sandbox, hidden=[str(run_dir), *map(str, hidden)], readable=sorted(readable),
                       private=private, gpu=gpu,
                       cache=str(cache) if cache is not None else None)

    def _generate(self, spec: TaskSpec, hw: Hardware, store: ObservationStore, env: Dict[str, str],
                  sandbox: Sandbox, cache_dir: Path, lead: Optional[Device] = None) -> Dict[str, inductor.GeneratedCandidate]:
        """The ``inductor`` source: per dtype, TorchInductor's code for the reference, made in a
        worker on the target device (:func:`kernelsynth.jobs.inductor`, a pool of its own that ends
        with it) and written by this process to ``<run dir>/inductor/`` (kept: a resumed run reuses
        it). A dtype whose extraction fails gets a rejected observation (role ``inductor``) with the
        reason, and no candidate."""
        listed = spec.interpret_shapes if hw.interpret else spec.verify_shapes
        dtypes = spec.interpret_dtypes if hw.interpret and spec.interpret_dtypes is not None else spec.dtypes
        shape = inductor.extraction_shape(listed)
        out: Dict[str, inductor.GeneratedCandidate] = {}
        todo = []
        for dtype in dtypes:
            stem = inductor.candidate_key(spec.reference, dtype, hw.device, shape, hw.fingerprint)
            found = inductor.load(store.run_dir, stem)
            if found is not None:
                out[dtype] = found
            else:
                todo.append((dtype, stem))
        if not todo:
            return out
        with WorkerPool(1, env=env, timeout_s=self.timeout_s, sandbox=sandbox, slots=[lead] if lead else None) as pool:
            self._check_reference(pool, spec)
            for dtype, stem in todo:
                payload = {"reference": str(spec.reference), "dtype": dtype, "device": hw.device, "shape": shape,
                           "seed": self.seed, "task": spec.name}
                res = pool.run("inductor", payload)
                if res.ok and isinstance(res.value, dict) and isinstance(res.value.get("source"), str):
                    out[dtype] = inductor.write(store.run_dir, stem, res.value)
                    v = res.value
                    log.info("inductor %s: %d generated %s kernels, library calls %s, compiled in %.1f s -> %s", dtype,
                             v.get("n_kernels", 0), v.get("codegen"), v.get("extern_calls") or "none",
                             v.get("compile_s") or 0.0, out[dtype].file)
                    continue
                error = res.error if not res.ok else "the worker returned no source"
                placeholder = inductor.GeneratedCandidate(f"{inductor.FOLDER}/{stem}", Path(spec.reference))
                job = next(j for j in self.plan(spec, hw, [], cache_dir, {dtype: placeholder})
                           if j.row["role"] == "inductor" and j.row["dtype"] == dtype)
                last = error.strip().splitlines()[-1] if error and error.strip() else "no error text"
                row = dict(job.row, timestamp=datetime.now(timezone.utc).isoformat(), wall_s=res.seconds,
                           verdict="rejected", fault=(res.fault if not res.ok else Fault.EXCEPTION).value,
                           reason=(f"inductor extraction failed: {last}"[:1000]
                                   + ("\n" + error[-3000:] if error else "")))
                if not store.has(job.key):
                    store.append(row)
                log.warning("inductor %s: extraction failed (%s)", dtype, row["reason"].splitlines()[0][:300])
            _warn_unlocked(pool)
        return out

    def _references(self, pool: WorkerPool, todo: List[Job],
                    devices: Optional[List[Device]] = None) -> Dict[Any, Dict[str, Any]]:
        """The independent references of every dtype with untrusted jobs (kernelsynth/audit.py),
        computed by :func:`kernelsynth.jobs.oracle` before any candidate runs, on each of
        ``devices`` (a worker pinned there; none: the pool's one device): ``{(device index or
        None, dtype): refs}``. The aten ops the oracle saw the reference dispatch join the spec's
        ``reference_ops`` in every job of that dtype (kernelsynth.spec.merge_reference_ops).
        A device where the oracle fails while it runs on another is retired (a failing GPU, not a
        broken task). Raises UserError when the reference fails on every device (the task is
        broken, not a candidate: the CLI prints one line naming the shape, no traceback)."""
        refs: Dict[Any, Dict[str, Any]] = {}
        where = [d.index for d in devices if d.index not in pool.retired] if devices else [None]
        seen = set()
        for j in todo:
            dtype = j.request.dtype
            if j.request.candidate.trusted or dtype in seen:
                continue
            seen.add(dtype)
            results = dict(pool.map("oracle", [j.request] * len(where), place=None if where == [None] else where))
            good = {where[i]: r for i, r in results.items() if r.ok}
            if not good:
                res = results[0]
                lines = [ln.strip() for ln in (res.error or "").splitlines() if ln.strip()]
                why = next((ln for ln in reversed(lines) if " on shape " in ln or ln.startswith("on shape ")),
                           lines[-1] if lines else res.fault)
                raise UserError(f"the task's reference failed on the audited shapes ({dtype}, {res.fault}): {why}"[:1500])
            for i, r in results.items():
                if not r.ok:
                    pool.retire(where[i], f"the reference failed there and not elsewhere ({r.fault}): "
                                          f"{(r.error or '').splitlines()[0][:300] if r.error else ''}")
            for d, r in good.items():
                refs[(d, dtype)] = r.value["references"]
            first = next(iter(good.values()))
            # the aten ops the reference dispatched, with the spec's own, for the fallback check
            # (a new request: reference_ops is not part of the key, KEY_EXCLUDED says why)
            ops = merge_reference_ops(j.request.reference_ops, first.value.get("reference_ops") or [])
            for other in todo:
                if other.request.dtype == dtype:
                    other.request = dataclasses.replace(other.request, reference_ops=ops)
            where = [d for d in where if d not in pool.retired] or where
        return refs

    def _screen(self, todo: List[Job], store: ObservationStore, counts: Dict[str, int]) -> List[Job]:
        """Reject, without running them, Python candidates whose source reaches frames, the heap or
        the harness (kernelsynth/screen.py, VERIFICATION.md rule 20); return the jobs left to run."""
        if not self.screen_sources:
            return todo
        left = []
        for job in todo:
            e = job.request.candidate
            findings = []
            if not e.trusted and backends.get(e.backend).screened and e.file:
                try:
                    findings = screen_source(Path(e.file).read_text())
                except (SyntaxError, ValueError, OSError):
                    findings = []  # the worker's import reports it as the candidate's own error
            if not findings:
                left.append(job)
                continue
            row = dict(job.row, timestamp=datetime.now(timezone.utc).isoformat(), wall_s=0.0, verdict="rejected",
                       fault=Fault.SCREENED.value, reason=("source screen: " + "; ".join(findings[:6]) + " -- a kernel has no "
                                                 "reason to reach frames, the heap or the harness (VERIFICATION.md rule 20)"))
            store.append(row)
            counts["rejected"] += 1
            log.info("rejected %s  (%s)", job.label, row["reason"][:200])
        return left

    def progress_bar(self, console=None):
        """The exploration's progress bar (rich), on ``console`` (default: rich's global console).
        Shown only with ``progress`` and on a terminal: rich draws nothing while a redirected
        console runs, but prints the bar's last state once at the end -- a stray
        ``exploration ... v3 wide_words int32 {...}`` line in a log of the console (session 8)."""
        from rich import get_console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        live = self.progress and (console or get_console()).is_terminal
        return Progress(TextColumn("[bold]exploration"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}", markup=False), console=console, disable=not live, transient=False)

    def _run_jobs(self, pool: WorkerPool, todo: List[Job], hw: Hardware, store: ObservationStore, console,
                  references: Optional[Dict[Any, Dict[str, Any]]] = None, devices: Optional[List[Device]] = None):
        counts = {"accepted": 0, "rejected": 0}
        fingerprints = {d.index: d.fingerprint for d in devices or []}
        todo = self._screen(todo, store, counts)
        with self.progress_bar(console) as bar:
            task = bar.add_task("", total=len(todo))
            problems: Dict[int, str] = {}

            def audit(idx: int, result: JobResult) -> bool:
                """The independent check (kernelsynth/audit.py); True (the worker is replaced: its
                process was interfered with) when it fails."""
                p = todo[idx].request
                if not isinstance(result.value, EvaluateResult):
                    return result.ok  # a forged value (observation_row rejects it): a fresh worker
                if not result.ok or p.candidate.trusted or references is None \
                        or result.value.verdict != "accepted":
                    return False
                # the references computed on the device the candidate ran on (kernelsynth/devices.py)
                refs = references.get((result.device, p.dtype))
                if refs is None:
                    refs = next((v for (_, dt), v in references.items() if dt == p.dtype), {})
                problem = audit_problem(result.value.audit, refs, p.comparison, p.tol, p.precision)
                if problem:
                    problems[idx] = problem
                return bool(problem)

            for idx, result in pool.map("evaluate", [j.request for j in todo],
                                        on_start=lambda i: bar.update(task, description=todo[i].label), recycle=audit):
                job = todo[idx]
                row = observation_row(job, result, hw)
                row["device_index"] = result.device  # the parent's record of where it ran
                row["device_fingerprint"] = fingerprints.get(result.device)
                problem = problems.pop(idx, None)
                if row["verdict"] == "accepted" and problem:
                    row.update(verdict="rejected", fault=Fault.AUDIT.value, reason=(
                        f"independent check: {problem} -- the in-process verification passed, so the "
                        "candidate interfered with the harness (references/VERIFICATION.md, rule 18)")[:4000])
                store.append(row)
                counts[row["verdict"]] += 1
                bar.advance(task)
                msg = f"{row['verdict']:8s} {job.label}"
                if row.get("median_ms") is not None:
                    msg += f"  {row['median_ms']:.4f} ms  {row['achieved_gbps']:.0f} GB/s"
                if row.get("reason"):
                    msg += f"  ({row['reason'].splitlines()[0][:200]})"
                log.info(msg)
        log.info("exploration: %d accepted, %d rejected observations", counts["accepted"], counts["rejected"])


def _warn_unlocked(pool: WorkerPool) -> None:
    """Say when GPU jobs of ``pool`` ran without their GPU's lock (its file could not be opened in
    the worker: kernelsynth/gpulock.py), so their timings were not guarded against other runs."""
    if pool.unlocked:
        errors = getattr(pool, "unlocked_errors", [])
        log.warning("%d GPU job(s) ran without the GPU's lock (%s): the lock file in the cache could not be "
                    "opened (%s), so their GPU work and timings were not guarded against other runs' GPU work",
                    len(pool.unlocked), ", ".join(sorted(set(pool.unlocked))),
                    "; ".join(errors[:3]) if errors else "no reason sent")


def observation_row(job: Job, result: JobResult, hw: Hardware) -> Dict[str, Any]:
    """The observation for one finished job: the planned row, every column of the worker's
    :class:`~kernelsynth.contract.EvaluateResult` (:func:`~kernelsynth.contract.result_columns`),
    plus derived metrics (achieved GB/s = bytes / median; % of the measured copy ceiling; roofline
    floor in ms)."""
    row = dict(job.row, timestamp=datetime.now(timezone.utc).isoformat(), wall_s=result.seconds)
    if result.ok and not isinstance(result.value, EvaluateResult):
        result = JobResult(Fault.EXCEPTION, error=f"the worker sent {type(result.value).__name__}, not an "
                           "EvaluateResult", seconds=result.seconds)
    if not result.ok:
        return row | {"verdict": "rejected", "fault": result.fault.value,
                      "reason": f"{result.fault}: {result.error.splitlines()[0] if result.error else ''}"[:2000]
                                + ("\n" + result.error[-3000:] if result.error else "")}
    v = result.value
    row.update({k: getattr(v, k) for k in result_columns()})
    # the worker's result is the candidate's to write (sandbox_s7 field_types): a value the table
    # cannot hold would end the run
    bad = schema_mismatches(row, result_columns())
    if bad or v.verdict not in ("accepted", "rejected"):
        row.update({k: None for k, _ in bad})
        return row | {"verdict": "rejected", "fault": Fault.TAMPERING.value,
                      "reason": "tampering: the worker's result has fields of the wrong type: "
                                + (", ".join(f"{k} ({t})" for k, t in bad) if bad else f"verdict {str(v.verdict)[:40]!r}")}
    row["fault"] = (Fault.OK if v.verdict == "accepted" else Fault.WRONG_OUTPUT).value
    long = {k: len(row[k]) for k in result_columns() if isinstance(row.get(k), str) and len(row[k]) > FIELD_CAP}
    if long:  # a worker's string is text for a table, not a payload (sandbox_s6 bloat_result)
        for k in long:
            row[k] = row[k][:FIELD_CAP]
        return row | {"verdict": "rejected", "fault": Fault.TAMPERING.value,
                      "reason": "tampering: the worker's result has oversized text fields "
                                + ", ".join(f"{k} ({n} characters)" for k, n in sorted(long.items()))
                                + f"; the cap is {FIELD_CAP}"}
    ms = row["median_ms"]
    derive(row, hw)  # achieved GB/s and TFLOP/s, % of the ceilings, roofline floor (kernelsynth/ceilings.py)
    if row["verdict"] == "accepted" and ms:
        problem = timing_integrity(row)
        if problem:
            row.update(verdict="rejected", fault=Fault.TIMING_INTEGRITY.value, reason=f"timing integrity: {problem}")
    return row


#: The longest string field of a worker's result kept in an observation; a longer one makes the
#: observation a ``tampering`` rejection (the run's files stay small whatever a candidate sends).
FIELD_CAP = 65536

#: A latency this far under the roofline floor (bytes / measured copy bandwidth) is impossible;
#: the slack covers the ceiling's own run-to-run spread (torch.compile's flip measures ~101%).
FLOOR_SLACK = 0.05
#: Host-timed synchronised calls may exceed the event-timed median by launch overhead, not more.
SYNC_RATIO, SYNC_SLACK_MS = 1.5, 0.2


def timing_integrity(row: Dict[str, Any]) -> Optional[str]:
    """Why a timed observation cannot be believed, or None (references/EXPLORATION.md, Timing)."""
    ms = row["median_ms"]
    if row.get("floor_ms") and ms < row["floor_ms"] * (1 - FLOOR_SLACK):
        return (f"{ms:.4f} ms is below the roofline floor {row['floor_ms']:.4f} ms "
                "(max of bytes / measured copy bandwidth and FLOPs / measured matmul rate): "
                "the timed region did not contain the work")
    if row.get("synced_ms") and row["synced_ms"] > SYNC_RATIO * ms + SYNC_SLACK_MS:
        return (f"event-timed {ms:.4f} ms but {row['synced_ms']:.4f} ms with a full device sync: "
                "work escapes the timed stream (side streams or threads)")
    return None


def huge_shapes(spec: TaskSpec, hw: Hardware, dtype: str) -> List[Dict[str, int]]:
    """The huge shape of ``spec`` at ``dtype`` on ``hw`` (VERIFICATION.md rule 12,
    :func:`kernelsynth.shapes.huge_shape`: more than 2^31 elements, where an int32 offset wraps),
    as a list of zero or one shape. Only on a GPU of known memory (``hw.total_mem_bytes``), for
    ``exact`` tasks with a timing shape and ``work`` bytes (an ``allclose`` task's reference and
    honest computations are float64 and float32 copies: 17 GB per float64 tensor at 2^31 elements), when
    the spec's bytes at the shape times :data:`~kernelsynth.shapes.HUGE_COPIES` are within
    :data:`~kernelsynth.shapes.HUGE_MEMORY_FRACTION` of the memory (flip2d: float32 and int32
    on a 141 GB H200, not on an 80 GB H100), and when those bytes are at least 2^31 elements'
    worth (embedding_gather's T x V x D passes 2^31 while its tensors stay small: none)."""
    if (hw.interpret or not hw.total_mem_bytes or spec.comparison != "exact" or not spec.derived_shapes
            or spec.timing_shape is None or "bytes" not in spec.work):
        return []
    budget, item = HUGE_MEMORY_FRACTION * hw.total_mem_bytes, DTYPE_ITEMSIZE[dtype]

    def fits(shape):  # within the memory, and moving at least 2^31 elements (not only a product of dims)
        moved = spec.work_model(shape, dtype)["bytes"]
        return moved * HUGE_COPIES <= budget and moved >= HUGE_ELEMENTS * item

    shape = huge_shape(spec.timing_shape, fits, constraints=spec.constraints)
    return [shape] if shape is not None else []


def joint_fits(spec: TaskSpec, listed: List[Dict[str, int]], plan: Optional[tuple]):
    """The budget predicate of :func:`kernelsynth.shapes.joint_shapes` for ``spec``: a shape fits
    when its product of dims and the spec's ``work`` bytes and FLOPs (the largest over the spec's
    dtypes) are within ``plan`` (:data:`kernelsynth.shapes.JOINT_PLAN`; None: within the largest of
    the ``listed`` shapes')."""
    def cost(shape):
        works = [spec.work_model(shape, d) for d in spec.dtypes]
        return (math.prod(shape.values()), max(w.get("bytes", 0.0) for w in works),
                max(w.get("flops", 0.0) for w in works))
    limit = plan if plan is not None else tuple(max(c) for c in zip(*(cost(s) for s in listed)))
    return lambda shape: all(c <= lim for c, lim in zip(cost(shape), limit))
