"""Merge the jobs of a sweep (Hydra multirun) into one dataset.

A sweep splits exploration across jobs; merging is the union of their observations
(deduplicated by key: the same key is the same measured work) followed by selection and
synthesis once per (task, hardware target), so the merged dataset equals what one run over the
union would give. Output, in ``out`` (default: the sweep directory): ``dataset/`` with one config
per task (named after it) and one split per hardware target, ``observations.parquet``,
``trajectories.parquet`` and ``run.json``. It runs at the end of a multirun (:class:`MergeCallback`,
configured in conf/config.yaml) and as ``kernelsynth-tools merge DIR... [--out DIR]`` (Hydra's
basic sweeper skips the callback when a job raised).

A job directory counts when it finished (``run.json``); a job that failed (``failed.json``,
written by the command line) or never finished is named in the result and left out: re-running
the sweep with the same ``hydra.sweep.dir`` resumes it. A job's observations are read through
:func:`kernelsynth.store.verified_rows`: a file whose authentication tag does not check under
that job's key (SECURITY.md) is not counted, is set aside in the job's
``observations/untrusted/`` (so re-running the sweep measures it again) and is named in the
result (``integrity_events``, run.json, :func:`report`).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, List, Optional

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from . import inductor
from .errors import UserError

log = logging.getLogger(__name__)


@dataclass
class MergeResult:
    out: Path
    dataset_dir: Path
    jobs: List[Path]
    #: job directory -> why it was left out
    failed: Dict[Path, str] = field(default_factory=dict)
    records: int = 0
    rejected: int = 0
    observations: int = 0
    #: (task, hw target) -> number of records
    parts: Dict[tuple, int] = field(default_factory=dict)
    #: one summary row per record (id, dtype, final version, config, metrics)
    rows: List[Dict[str, Any]] = field(default_factory=list)
    #: observation files left out because their tag did not check (``{"job", "file", "problem", ...}``)
    integrity_events: List[Dict[str, str]] = field(default_factory=list)
    #: "<task> / <hw>: ceiling raised: ..." for every ceiling a merged observation raised (kernelsynth/ceilings.py)
    ceiling_lines: List[str] = field(default_factory=list)
    #: (task, hw target) -> observations of another hardware fingerprint than the target's first job, left out
    foreign: Dict[tuple, int] = field(default_factory=dict)


def job_dirs(paths: List[Path]) -> List[Path]:
    """The run directories named by ``paths``: a run directory itself (it has ``.hydra/config.yaml``)
    or every job of a sweep directory (its numbered subdirectories). Raises UserError for a path
    that is neither."""
    out = []
    for p in map(Path, paths):
        if (p / ".hydra" / "config.yaml").is_file():
            out.append(p)
            continue
        jobs = [d for d in p.iterdir() if (d / ".hydra" / "config.yaml").is_file()] if p.is_dir() else []
        if not jobs:
            raise UserError(f"{p}: neither a run directory (.hydra/config.yaml) nor a sweep directory of them")
        out += sorted(jobs, key=lambda d: (not d.name.isdigit(), int(d.name) if d.name.isdigit() else 0, d.name))
    return list(dict.fromkeys(out))


def _job_status(d: Path) -> Optional[str]:
    """None when the job finished, else why it is left out."""
    if (d / "failed.json").is_file():
        return "failed: " + json.loads((d / "failed.json").read_text()).get("error", "")
    if not (d / "run.json").is_file():
        return "did not finish (no run.json): interrupted, or still running"
    return None


def stage_targets() -> set:
    """The ``_target_`` values a merge may instantiate: kernelsynth's selection and synthesis
    stages, as its own config declares them (:class:`kernelsynth.config.SelectionConfig`,
    :class:`~kernelsynth.config.SynthesisConfig`)."""
    from .config import SelectionConfig, SynthesisConfig

    return {SelectionConfig._target_, SynthesisConfig._target_}


def foreign_targets(node) -> List[str]:
    """Every ``_target_`` in ``node`` (an OmegaConf node or plain container, recursively) that is
    not one of :func:`stage_targets`: a job directory's config is read back by the merge, and
    ``hydra.utils.instantiate`` calls what it names (tests/adversarial/sandbox_s7 merge_tamper:
    ``pathlib.Path.write_text`` wrote a file of the attacker's choosing). A prefix check was not
    enough: Hydra resolves ``kernelsynth.merge.Path.write_text`` through the module's imports to
    the same function (tests/adversarial/sandbox_s8 merge_prefix)."""
    from omegaconf import OmegaConf

    if OmegaConf.is_config(node):
        node = OmegaConf.to_container(node, resolve=False)
    allowed = stage_targets()
    out: List[str] = []
    if isinstance(node, dict):
        t = node.get("_target_")
        if t is not None and str(t) not in allowed:
            out.append(str(t))
        for v in node.values():
            out += foreign_targets(v)
    elif isinstance(node, list):
        for v in node:
            out += foreign_targets(v)
    return out


def merge(paths: List[Path], out: Optional[Path] = None) -> MergeResult:
    """Merge the jobs under ``paths`` into ``out`` (see module docstring).

    ``out`` defaults to the sweep directory when ``paths`` is one sweep directory. Raises
    UserError when ``out`` is needed and missing, when no job finished, or when a job's spec
    changed since it ran (its records could not be rendered from the files it measured).
    Observation files that fail their integrity check are left out (``integrity_events``)."""
    from hydra.utils import instantiate

    from .ceilings import correct as correct_ceilings, same_hardware
    from .profiling import mark_unattempted, unattempted
    from .engine import load_task
    from .hardware import Hardware
    from .stages.selection import TRAJECTORY_SCHEMA
    from .stages.synthesis import Part, Synthesis, write_dataset
    from .store import OBSERVATION_SCHEMA, atomic_write_bytes, atomic_write_table, rows_to_table, verified_rows

    paths = [Path(p) for p in paths]
    jobs = job_dirs(paths)
    if out is None:
        if len(paths) == 1 and jobs and all(j.parent == paths[0] for j in jobs):
            out = paths[0]
        else:
            raise UserError("more than one sweep or a run directory given; say where with --out DIR")
    out = Path(out)
    result = MergeResult(out=out, dataset_dir=out / "dataset", jobs=jobs)
    groups: Dict[tuple, Dict[str, Any]] = {}
    hw_fields = {f.name for f in fields(Hardware)}
    for d in jobs:
        why = _job_status(d)
        if why:
            result.failed[d] = why
            continue
        info = json.loads((d / "run.json").read_text())
        cfg = OmegaConf.load(d / ".hydra" / "config.yaml")
        foreign = foreign_targets(cfg.get("selection")) + foreign_targets(cfg.get("synthesis"))
        if foreign:  # the merge instantiates what the job's config names: kernelsynth's own stages only
            raise UserError(f"{d}: its .hydra/config.yaml names stage target(s) outside kernelsynth "
                            f"({', '.join(foreign[:3])}); a merge builds only kernelsynth's own "
                            "selection and synthesis stages from job directories (SECURITY.md)")
        # the spec itself, without the job's tunables/dtypes restriction: selection judges the
        # dtypes that have observations, and records do not depend on the search space
        task = cfg.task
        spec = load_task(OmegaConf.create({"task": {"name": task.name, "spec": task.get("spec"), "tunables": {},
                                                    "dtypes": [], "search_path": list(task.get("search_path") or [])}}))
        if spec.sha256 != info["spec_sha256"]:
            raise UserError(f"{d}: the spec of task {spec.name} ({spec.path}) changed since this job ran; "
                            "re-run the sweep to measure the current files")
        hw = Hardware(**{k: v for k, v in info["hardware"].items() if k in hw_fields})
        g = groups.setdefault((spec.name, hw.target), {"spec": spec, "hw": hw, "cfg": cfg, "obs": {}, "jobs": []})
        if g["spec"].sha256 != spec.sha256:
            raise UserError(f"{d}: task {spec.name} ran with another version of its spec than {g['jobs'][0]}")
        if hw.fingerprint != g["hw"].fingerprint:
            log.warning("%s: hw=%s on another device/driver/library fingerprint than %s; its observations are "
                        "left out of this target's merged records (merge its jobs on their own)", d, hw.target,
                        g["jobs"][0])
        g["jobs"].append(d)
        g.setdefault("generated", {}).update(inductor.load_all(d))  # the inductor source's files
        rows, events = verified_rows(d)  # only files whose tag checks under this job's key
        for event in events:
            log.warning("%s: observation file %s left out of the merge (%s)", d, event["file"], event["problem"])
            result.integrity_events.append(dict(event, job=str(d)))
        for o in rows:
            g["obs"].setdefault(o["key"], o)
    if not groups:
        names = "; ".join(f"{d}: {why}" for d, why in result.failed.items())
        raise UserError(f"no finished job to merge ({names})")
    parts, all_obs, all_traj = [], [], []
    for (task, target), g in sorted(groups.items()):
        cfg = g["cfg"]
        run_config = OmegaConf.to_container(cfg, resolve=True)
        selection = instantiate(cfg.selection)
        synthesis: Synthesis = instantiate(cfg.synthesis)
        # one device per target's records: ratios and ceilings never mix fingerprints (red team s35 D1)
        mine, foreign = same_hardware(list(g["obs"].values()), g["hw"].fingerprint)
        if foreign:
            result.foreign[(task, target)] = foreign
        obs = sorted(mine, key=lambda r: (r["dtype"], r["role"], r["version"], r["config"], r["key"]))
        # the ceilings in effect from the merged observations: a verified one above a measured
        # ceiling raises it, as in a single run (kernelsynth/ceilings.py)
        for c in correct_ceilings(g["hw"], obs, g["spec"].sha256):
            result.ceiling_lines.append(f"{task} / {target}: ceiling raised: {c['what']}")
        # a run that attempted no profile (no GPU, exploration.profile=false) says why in its rows
        why = unattempted(g["hw"].interpret, bool(cfg.exploration.get("profile", True)))
        if why:
            mark_unattempted(obs, g["spec"].sha256, why)
        trajectories = selection.run(g["spec"], obs)
        records = synthesis.records(g["spec"], g["hw"], trajectories, obs, run_config, g.get("generated"))
        parts.append(Part(g["spec"], g["hw"], target, f"data/{task}/{target}-00000-of-00001.parquet",
                          records, trajectories, obs))
        result.parts[(task, target)] = len(records)
        for r in records:
            m = r["metrics"]
            best = next(v for v in r["trajectory"] if v["version"] == m["best_version"])
            result.rows.append({"id": r["id"], "dtype": r["dtype"], "final": m["best_version"], "config": best["config"],
                                "ms": m["best_ms"], "GB/s": m["achieved_gbps"], "% copy": m["pct_of_copy_ceiling"],
                                "x v0": m["speedup_vs_v0"], "x eager": m["speedup_vs_eager"],
                                "x compile": m["speedup_vs_compile"]})
        all_obs += obs
        all_traj += [dict(t, task=task) for t in trajectories]
    write_dataset(result.dataset_dir, parts)
    atomic_write_table(out / "observations.parquet", rows_to_table(all_obs, OBSERVATION_SCHEMA))
    atomic_write_table(out / "trajectories.parquet", rows_to_table(all_traj, TRAJECTORY_SCHEMA))
    result.records = sum(len(p.records) for p in parts)
    result.rejected = sum(not t["accepted"] for t in all_traj)
    result.observations = len(all_obs)
    atomic_write_bytes(out / "run.json", json.dumps({
        "merged_jobs": [str(j) for j in jobs if j not in result.failed],
        "failed_jobs": {str(k): v for k, v in result.failed.items()},
        "observations": result.observations, "records": result.records, "rejected": result.rejected,
        "parts": [{"task": t, "hw": h, "records": n} for (t, h), n in result.parts.items()],
        "dataset_dir": str(result.dataset_dir), "integrity_events": result.integrity_events,
        "ceilings": {f"{p.spec.name}/{p.split}": {"methods": p.hw.ceiling_methods, "corrections": p.hw.ceiling_corrections}
                     for p in parts},
        "charts": [c for p in parts for c in p.charts]}, indent=2, default=str).encode())
    return result


def report(result: MergeResult) -> List[str]:
    """The merge in a few lines: what was merged, where, how to load it, and every failed job."""
    lines = [f"merged {len(result.jobs) - len(result.failed)} job(s), {result.observations} observations -> "
             f"{result.records} record(s), {result.rejected} trajectory(ies) rejected "
             f"(reasons: {result.out / 'trajectories.parquet'})"]
    for (task, target), n in result.parts.items():
        lines.append(f"  {task} / {target}: {n} record(s)")
    if result.records:
        task = next(iter(result.parts))[0]
        lines.append(f"dataset: {result.dataset_dir}  (datasets.load_dataset('{result.dataset_dir}', '{task}'))")
    if result.rows:  # a Markdown table (BENCHMARKS.md pastes it)
        fmt = {"ms": ".4f", "GB/s": ".0f", "% copy": ".1f", "x v0": ".2f", "x eager": ".2f", "x compile": ".2f"}
        cols = list(result.rows[0])
        lines += ["", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in result.rows:
            lines.append("| " + " | ".join("n/a" if r[c] is None else format(r[c], fmt.get(c, "")) for c in cols) + " |")
        lines.append("")
    for line in result.ceiling_lines:
        lines.append(line)
    for (task, target), n in result.foreign.items():
        lines.append(f"left out {n} observation(s) of {task} / {target} measured on another hardware fingerprint")
    for d, why in result.failed.items():
        lines.append(f"left out {d}: {why}")
    for e in result.integrity_events:
        lines.append(f"left out observation file {e['file']}: {e['problem']} (moved to {e['moved_to']}; "
                     "re-running the sweep measures it again)")
    return lines


class MergeCallback(Callback):
    """Hydra callback: merge the sweep's jobs when the multirun ends (conf/config.yaml,
    ``hydra.callbacks.merge``). A failed job or an observation file that failed its integrity
    check is named; the sweep's exit status is then 1."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        import sys

        sweep_dir = Path(config.hydra.sweep.dir)
        try:
            result = merge([sweep_dir])
        except UserError as e:
            print(f"kernelsynth: merge: {e}", file=sys.stderr)
            sys.exit(1)
        for line in report(result):
            print(line)
        repo = OmegaConf.select(config, "publish.repo_id", default=None, throw_on_missing=False)
        if repo and result.records:  # publish=hub: the sweep's one dataset is what gets pushed
            from .publish import PublishError, push

            try:
                print(f"published {push(result.dataset_dir, repo, bool(config.publish.get('private', True)))}")
            except PublishError as e:
                print(f"kernelsynth: error: publishing to {repo} failed ({e}); the dataset is kept in "
                      f"{result.dataset_dir}. Retry the push alone: kernelsynth-tools publish {sweep_dir} "
                      f"--repo-id {repo}", file=sys.stderr)
                sys.exit(1)
        if result.integrity_events:
            print(f"kernelsynth: {len(result.integrity_events)} observation file(s) failed their integrity check "
                  f"and were left out; re-run the same command with hydra.sweep.dir={sweep_dir} to measure them "
                  "again (SECURITY.md)", file=sys.stderr)
        if result.failed:
            print(f"kernelsynth: {len(result.failed)} job(s) failed; fix them and re-run the same command with "
                  f"hydra.sweep.dir={sweep_dir} to resume the sweep, or merge what is there with "
                  f"`kernelsynth-tools merge {sweep_dir}`", file=sys.stderr)
        if result.failed or result.integrity_events:
            sys.exit(1)
