"""The engine: spec -> observations -> trajectories -> records, with stages built from config.

The engine never imports a task: the spec is found by path and its files are imported by the
workers. The run directory is passed in (Hydra's output directory on the command line, a
temporary folder in tests), never read from global state.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from . import hardware
from .paths import cache_dir
from .errors import SpecError, UserError
from .spec import TaskSpec, load_spec, resolve_spec_path
from .store import ObservationStore, atomic_write_bytes
from .workers import WorkerPool

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    run_dir: Path
    spec: TaskSpec
    hardware: hardware.Hardware
    observations: List[Dict[str, Any]]
    trajectories: List[Dict[str, Any]]
    dataset_dir: Path
    wall_s: float
    published: Optional[str] = None


def probe_hardware(interpret: bool, reference: Optional[Path] = None, timeout_s: float = 300) -> Dict[str, Any]:
    """Ask a one-shot worker process what it sees (the parent never initialises CUDA), and
    whether the spec's reference imports there."""
    with WorkerPool(1, env={"TRITON_INTERPRET": "1"} if interpret else {}, timeout_s=timeout_s) as pool:
        res = pool.run("probe", {"reference": str(reference) if reference else None})
    if not res.ok:
        raise RuntimeError(f"hardware probe failed ({res.fault}): {res.error}")
    return res.value


STAGES = ("exploration", "selection", "synthesis", "publish")


def build_stages(cfg: DictConfig) -> Dict[str, Any]:
    """Instantiate every stage from its config group (``_target_`` + settings).

    Raises UserError naming the group when a setting is not accepted (e.g. a key added with ``+``).
    """
    stages = {}
    for name in STAGES:
        try:
            stages[name] = instantiate(cfg[name])
        except Exception as e:  # hydra wraps the constructor's TypeError/ValueError
            cause = e.__cause__ or e
            raise UserError(f"config group '{name}': {cause}") from e
    return stages


def load_task(cfg: DictConfig) -> TaskSpec:
    """The task of the config: ``task.spec`` (a path) when set, else the task folder ``task.name``
    in the spec roots (kernelsynth/tasks.py, with ``task.search_path``). ``task.tunables`` values
    that are null (the spec's own values) are no override."""
    t = cfg.task
    search_path = [str(p) for p in t.search_path]
    path = resolve_spec_path(t.name, t.spec, search_path)
    tunables = {k: v for k, v in (OmegaConf.to_container(t.tunables, resolve=True) or {}).items() if v is not None}
    return load_spec(path, tunables=tunables or None, dtypes=list(t.dtypes) or None, task_folder=not t.spec)


def run(cfg: DictConfig, run_dir: Path, console=None) -> RunResult:
    """Run the three phases (and publishing) into ``run_dir``; print and return the summary."""
    start = time.perf_counter()
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    config = OmegaConf.to_container(cfg, resolve=True)
    stages = build_stages(cfg)  # before any work: a bad stage setting fails here
    spec = load_task(cfg)
    log.info("task %s from %s (sha256 %s)", spec.name, spec.path, spec.sha256[:12])
    probe = probe_hardware(bool(cfg.hw.interpret), spec.reference)
    if probe.get("reference_error"):
        raise SpecError(spec.path, "reference", "a module that imports and defines Model, get_init_inputs "
                        f"and get_inputs ({spec.reference}: {probe['reference_error']})")
    hw = hardware.resolve(config["hw"], probe)
    for line in hardware.summary_lines(hw):
        log.info(line)

    store = ObservationStore(run_dir)
    observations = stages["exploration"].run(spec, hw, store, cache_dir(cfg.cache_dir), console=console)
    trajectories = stages["selection"].run(spec, observations, run_dir)
    dataset_dir = stages["synthesis"].run(spec, hw, trajectories, observations, run_dir, config)
    published = stages["publish"].run(dataset_dir)
    wall = time.perf_counter() - start
    atomic_write_bytes(run_dir / "run.json", json.dumps({
        "task": spec.name, "spec_sha256": spec.sha256, "hardware": hw.to_dict(), "wall_s": wall,
        "observations": len(observations), "records": sum(t["accepted"] for t in trajectories),
        "dataset_dir": str(dataset_dir), "published": published}, indent=2, default=str).encode())
    result = RunResult(run_dir, spec, hw, observations, trajectories, dataset_dir, wall, published)
    print_summary(result, console)
    return result


def summary_rows(result: RunResult) -> List[Dict[str, Any]]:
    """One row per (dtype, version or baseline): the fastest verified observation and its ratios."""
    from .stages.selection import _fastest

    rows = []
    for dtype in result.spec.dtypes:
        obs = [o for o in result.observations if o["dtype"] == dtype and o["spec_sha256"] == result.spec.sha256]
        external = sorted({o["version"] for o in obs if o["role"] == "external"})
        groups = [(c.version, "candidate") for c in result.spec.candidates] + \
                 [(e, "external") for e in external] + [(b, "baseline") for b in result.spec.baselines]
        best = {v: _fastest([o for o in obs if o["version"] == v and o["role"] == role]) for v, role in groups}
        v0 = best.get(result.spec.candidates[0].version)
        eager, comp = best.get("eager"), best.get("compile")
        traj = next((t for t in result.trajectories if t["dtype"] == dtype), None)
        for v, role in groups:
            o = best[v]
            n = sum(1 for x in obs if x["version"] == v and x["role"] == role)
            n_ok = sum(1 for x in obs if x["version"] == v and x["role"] == role and x["verdict"] == "accepted")
            ms = o["median_ms"] if o else None
            if n == 0:
                continue
            if role == "external" and o is None:
                bad = next(x for x in obs if x["version"] == v and x["role"] == role)
                rows.append({"dtype": dtype, "version": v, "name": v, "configs_ok": "0/1", "config": "",
                             "median_ms": None, "gbps": None, "pct_copy": None, "tflops": None, "pct_mm": None,
                             "regs": None, "spills": None, "vs_v0": None, "vs_eager": None,
                             "vs_compile": None, "trajectory": "rejected: " + bad["reason"].splitlines()[0][:60]})
                continue
            rows.append({
                "dtype": dtype, "version": v, "name": o["name"] if o else "", "configs_ok": f"{n_ok}/{n}",
                "config": " ".join(f"{k}={v}" for k, v in json.loads(o["config"]).items()) if o else "",
                "median_ms": ms,
                "gbps": o["achieved_gbps"] if o else None, "pct_copy": o["pct_of_copy_ceiling"] if o else None,
                "tflops": o.get("achieved_tflops") if o else None,
                "pct_mm": o.get("pct_of_matmul_ceiling") if o else None,
                "regs": o.get("n_regs") if o else None, "spills": o.get("n_spills") if o else None,
                "vs_v0": v0["median_ms"] / ms if ms and v0 and v0["median_ms"] else None,
                "vs_eager": eager["median_ms"] / ms if ms and eager and eager["median_ms"] else None,
                "vs_compile": comp["median_ms"] / ms if ms and comp and comp["median_ms"] else None,
                "trajectory": ("accepted" if traj and traj["accepted"] else "rejected") if role == "candidate"
                else ("external" if role == "external" else ""),  # screened only: not a trajectory
            })
    return rows


def evaluate_flops(result: RunResult) -> List[float]:
    """The FLOPs of each observation (nonzero for compute tasks such as convolutions)."""
    return [o.get("flops") or 0.0 for o in result.observations]


def print_summary(result: RunResult, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=max(176, Console().width))
    f = lambda x, s: "-" if x is None else format(x, s)  # noqa: E731
    table = Table(title=f"kernelsynth {result.spec.name} on {result.hardware.device_name}"
                        + (f" (copy ceiling {result.hardware.copy_gbps:.0f} GB/s)" if result.hardware.copy_gbps else ""))
    compute = any(evaluate_flops(result))
    cols = ["dtype", "version", "verified configs", "best config", "median ms", "GB/s", "% copy"]
    cols += ["TFLOP/s", "% matmul"] if compute else []
    cols += ["regs", "spills", "x v0", "x eager", "x compile", "trajectory"]
    for col in cols:
        # wrap, never cut (a cut config cannot be reproduced); the config gets room to stay whole
        table.add_column(col, overflow="fold", min_width={"best config": 24, "trajectory": 10}.get(col))
    for r in summary_rows(result):
        cells = [r["dtype"], r["version"], r["configs_ok"], r["config"], f(r["median_ms"], ".4f"),
                 f(r["gbps"], ".0f"), f(r["pct_copy"], ".1f")]
        cells += [f(r["tflops"], ".0f"), f(r["pct_mm"], ".0f")] if compute else []
        cells += [f(r["regs"], "d"), f(r["spills"], "d"), f(r["vs_v0"], ".2f"), f(r["vs_eager"], ".2f"),
                  f(r["vs_compile"], ".2f"), r["trajectory"]]
        table.add_row(*cells)
    console.print(table)
    n_rec = sum(t["accepted"] for t in result.trajectories)
    console.print(f"{n_rec} record(s) in {result.dataset_dir}  (datasets.load_dataset('{result.dataset_dir}'))")
    for t in result.trajectories:
        if not t["accepted"]:
            console.print(f"[yellow]rejected[/yellow] {t['dtype']}: " + "; ".join(t["reasons"]))
    console.print(f"end-to-end wall time: {result.wall_s:.1f} s")
