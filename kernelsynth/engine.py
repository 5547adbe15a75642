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
from typing import Any, Dict, List, Optional, Sequence

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from . import hardware, inductor
from .config import unknown_settings, unknown_settings_message
from .paths import cache_dir
from .errors import UserError, reference_error
from .publish import PublishError
from .spec import TaskSpec, load_spec, resolve_spec_path
from .sandbox import Sandbox
from .store import KEY_FILE, ObservationStore, atomic_write_bytes
from .workers import PROBE_ONLY_ENV, WorkerPool

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
    #: set when publishing failed after synthesis: what failed, in one line (the dataset is kept)
    publish_error: Optional[str] = None

    @property
    def n_records(self) -> int:
        return sum(bool(t["accepted"]) for t in self.trajectories)


def probe_hardware(interpret: bool, reference: Optional[Path] = None, timeout_s: float = 300,
                   sandbox: Optional[Sandbox] = None) -> Dict[str, Any]:
    """Ask a one-shot worker process what it sees (the parent never initialises CUDA), and
    whether the spec's reference imports there (in ``sandbox``, default: the default sandbox).
    The worker runs kernelsynth.hwprobe only (PROBE_ONLY_ENV: not the harness's imports)."""
    env = {PROBE_ONLY_ENV: "1", **({"TRITON_INTERPRET": "1"} if interpret else {})}
    with WorkerPool(1, env=env, timeout_s=timeout_s, sandbox=sandbox) as pool:
        res = pool.run("probe", {"reference": str(reference) if reference else None})
    if not res.ok:
        raise RuntimeError(f"hardware probe failed ({res.fault}): {res.error}")
    return res.value


STAGES = ("exploration", "selection", "synthesis", "publish")


def build_stages(cfg: DictConfig) -> Dict[str, Any]:
    """Instantiate every stage from its config group (``_target_`` + settings).

    Raises UserError naming the key, the closest valid one and the valid keys when the config
    has a key its schema (kernelsynth/config.py) does not declare (one added with ``+``, which
    Hydra's schema check lets through), and naming the group when a stage refuses a setting.
    """
    found = unknown_settings(cfg)
    if found:
        raise UserError(unknown_settings_message(found))
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


def run(cfg: DictConfig, run_dir: Path, console=None, publish: bool = True, hidden: Sequence[str] = ()) -> RunResult:
    """Run the three phases (and publishing) into ``run_dir``; print and return the summary.
    ``hidden``: folders workers may not see besides ``run_dir`` (a sweep's folder: its other jobs).

    Raises UserError before any work for a bad config, spec, hardware target or missing Hub
    token. A failed push does not raise: ``publish_error`` says what failed (the dataset is kept)."""
    start = time.perf_counter()
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    config = OmegaConf.to_container(cfg, resolve=True)
    stages = build_stages(cfg)  # before any work: a bad stage setting fails here
    stages["publish"].check()  # no token or a bad repo id: stop now, not after the whole run
    spec = load_task(cfg)
    log.info("task %s from %s (sha256 %s)", spec.name, spec.path, spec.sha256[:12])
    sandbox = Sandbox(cfg.exploration.get("sandbox"), hidden=[str(run_dir), *map(str, hidden)], readable=[str(Path(spec.reference).parent)],
                      gpu=not bool(cfg.hw.interpret))
    log.info(sandbox.status) if sandbox.active else log.warning(sandbox.status)
    interpret = bool(cfg.hw.interpret)
    if interpret:  # nothing to detect; the exploration's first worker imports the reference (check_reference)
        from .hwprobe import interpreter_facts  # imports torch, which `--help` and config errors need not

        probe = interpreter_facts()
    else:
        probe = probe_hardware(False, spec.reference, sandbox=sandbox)
        if probe.get("reference_error"):
            raise reference_error(spec, probe["reference_error"])
    hw = hardware.resolve(config["hw"], probe)
    for line in hardware.summary_lines(hw):
        log.info(line)

    fresh = not (run_dir / "observations").exists() and not (run_dir / KEY_FILE).exists()
    # written at the end: its presence means "finished". Removed only now, when the work starts: a resume
    # that stops on a bad config, spec or hardware target keeps the finished run's (session 24)
    (run_dir / "run.json").unlink(missing_ok=True)
    store = ObservationStore(run_dir)
    try:
        observations = stages["exploration"].run(spec, hw, store, cache_dir(cfg.cache_dir), console=console,
                                                 hidden=hidden, check_reference=interpret)
    except (UserError, KeyboardInterrupt):  # e.g. the reference did not import in the first worker: a fresh run
        if fresh and store.dir.exists() and not any(store.dir.iterdir()):  # that measured nothing leaves no store
            store.dir.rmdir()
            (run_dir / KEY_FILE).unlink(missing_ok=True)
            generated = run_dir / inductor.FOLDER  # made for the sandbox's mount before the reference check
            if generated.is_dir() and not any(generated.iterdir()):
                generated.rmdir()
        raise
    trajectories = stages["selection"].run(spec, observations, run_dir)
    dataset_dir = stages["synthesis"].run(spec, hw, trajectories, observations, run_dir, config)
    published = publish_error = None
    try:
        if publish:  # a multirun job leaves it to the merge (kernelsynth/merge.py)
            published = stages["publish"].run(dataset_dir, records=sum(t["accepted"] for t in trajectories))
    except PublishError as e:  # the dataset is kept; run.json and the summary still follow
        publish_error = str(e)
    wall = time.perf_counter() - start
    atomic_write_bytes(run_dir / "run.json", json.dumps({
        "task": spec.name, "spec_sha256": spec.sha256, "hardware": hw.to_dict(), "wall_s": wall,
        "observations": len(observations), "records": sum(t["accepted"] for t in trajectories),
        "rejected": sum(not t["accepted"] for t in trajectories),
        "dataset_dir": str(dataset_dir), "published": published, "publish_error": publish_error,
        # the jobs' sandbox (exploration's), else the probe's (a run whose exploration did not start one)
        "sandbox": getattr(stages["exploration"], "sandbox_report", None) or sandbox.to_dict(),
        "integrity_events": store.events,
        "compile_cache": getattr(stages["exploration"], "cache_report", None),
        "ceilings": {"methods": hw.ceiling_methods, "corrections": hw.ceiling_corrections},
        "profiles": profile_summary(observations, spec.sha256),
        "charts": getattr(stages["synthesis"], "charts", [])}, indent=2, default=str).encode())
    for event in store.events:
        log.warning("integrity: %s %s (%s); its job was re-run", event["at"], event["file"], event["problem"])
    result = RunResult(run_dir, spec, hw, observations, trajectories, dataset_dir, wall, published, publish_error)
    print_summary(result, console)
    return result


def summary_rows(result: RunResult) -> List[Dict[str, Any]]:
    """One row per (dtype, version or baseline): the fastest verified observation and its ratios."""
    from .stages.selection import _fastest

    rows = []
    for dtype in result.spec.dtypes:
        obs = [o for o in result.observations if o["dtype"] == dtype and o["spec_sha256"] == result.spec.sha256]
        external = sorted({o["version"] for o in obs if o["role"] == "external"})
        generated = [("inductor", "inductor")] if any(o["role"] == "inductor" for o in obs) else []
        groups = [(c.version, "candidate") for c in result.spec.candidates] + generated + \
                 [(e, "external") for e in external] + [(b, "baseline") for b in result.spec.baselines]
        # keyed by (version, role): an external file named v0.py or eager.py is not the ladder's v0 or the baseline
        best = {(v, role): _fastest([o for o in obs if o["version"] == v and o["role"] == role]) for v, role in groups}
        v0 = best.get((result.spec.candidates[0].version, "candidate"))
        eager, comp = best.get(("eager", "baseline")), best.get(("compile", "baseline"))
        traj = next((t for t in result.trajectories if t["dtype"] == dtype and t.get("source", "ladder") == "ladder"), None)
        made = next((t for t in result.trajectories if t["dtype"] == dtype and t.get("source") == "inductor"), None)
        for v, role in groups:
            o = best[(v, role)]
            n = sum(1 for x in obs if x["version"] == v and x["role"] == role)
            n_ok = sum(1 for x in obs if x["version"] == v and x["role"] == role and x["verdict"] == "accepted")
            ms = o["median_ms"] if o else None
            if n == 0:
                continue
            if role in ("external", "inductor") and o is None:
                bad = next(x for x in obs if x["version"] == v and x["role"] == role)
                rows.append({"dtype": dtype, "version": v, "name": v, "configs_ok": "0/1", "config": "",
                             "median_ms": None, "gbps": None, "pct_copy": None, "tflops": None, "pct_mm": None,
                             "regs": None, "spills": None, "vs_v0": None, "vs_eager": None,
                             "vs_compile": None,
                             "trajectory": "rejected: " + ((bad.get("reason") or "").strip() or "no reason recorded"
                                                           ).splitlines()[0][:60]})
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
                else ("accepted" if made and made["accepted"] else "rejected") if role == "inductor"  # v0 -> inductor
                else (_external_label(o) if role == "external" else ""),  # screened only: not a trajectory
            })
    return rows


def _external_label(o: Optional[Dict[str, Any]]) -> str:
    """'external', or what an accepted external candidate fell back to (red team s35 G: one that
    called the reference's operators read as "1/1 external", like an honest kernel)."""
    calls = (o or {}).get("reference_ops_used") or (o or {}).get("library_calls")
    return f"external, calls {calls}: not a kernel" if calls else "external"


def profile_summary(observations: List[Dict[str, Any]], spec_sha256: str) -> List[Dict[str, Any]]:
    """One entry per profiled (or skipped) target of the profile step: dtype, version, config, the
    ``profile`` status and the headline ncu numbers (run.json ``profiles``)."""
    keep = ("dtype", "version", "config", "profile", "ncu_kernel", "ncu_kernels", "ncu_dram_pct", "ncu_sm_pct",
            "ncu_tensor_pct", "ncu_occupancy_pct", "ncu_l2_hit_pct", "ncu_registers", "ncu_local_insts",
            "ncu_stalls", "profile_s")
    return [{k: o.get(k) for k in keep} for o in observations
            if o.get("profile") and o["spec_sha256"] == spec_sha256]


def profile_table(result: RunResult):
    """The profile step's numbers as a rich Table (one row per profiled version and dtype), or
    None when nothing was profiled; reasons for skipped profiles are printed beside it."""
    from rich.table import Table

    rows = [p for p in profile_summary(result.observations, result.spec.sha256) if p["profile"] == "ncu"]
    if not rows:
        return None
    f = lambda x, s: "-" if x is None else format(x, s)  # noqa: E731
    table = Table(title="Nsight Compute, one call of each version's fastest config (% of peak)",
                  pad_edge=False, padding=(0, 1))
    for name in ("dtype", "ver", "kernels", "DRAM %", "SM %", "tensor %", "occup %", "L2 hit %", "regs",
                 "local insts", "top stalls (cycles/issue)"):
        table.add_column(name, overflow="fold")
    for p in rows:
        table.add_row(p["dtype"], p["version"], f(p["ncu_kernels"], "d"), f(p["ncu_dram_pct"], ".1f"),
                      f(p["ncu_sm_pct"], ".1f"), f(p["ncu_tensor_pct"], ".1f"), f(p["ncu_occupancy_pct"], ".1f"),
                      f(p["ncu_l2_hit_pct"], ".1f"), f(p["ncu_registers"], "d"), f(p["ncu_local_insts"], "d"),
                      p["ncu_stalls"] or "-")
    return table


def evaluate_flops(result: RunResult) -> List[float]:
    """The FLOPs of each observation (nonzero for compute tasks such as convolutions)."""
    return [o.get("flops") or 0.0 for o in result.observations]


#: Widest the summary table gets (columns of a terminal); narrower terminals get their width.
SUMMARY_WIDTH = 100


def summary_table(result: RunResult):
    """The summary as a rich Table that fits the console's width: columns with no value in any row
    are left out (the interpreter has no timings) and long cells wrap, never cut (a cut config
    cannot be reproduced)."""
    from rich.table import Table
    from rich.text import Text

    f = lambda x, s: "-" if x is None else format(x, s)  # noqa: E731
    cols = [("dtype", lambda r: r["dtype"]), ("ver", lambda r: r["version"]),
            ("ok cfgs", lambda r: r["configs_ok"]), ("best config", lambda r: r["config"]),
            ("ms", lambda r: f(r["median_ms"], ".4f")), ("GB/s", lambda r: f(r["gbps"], ".0f")),
            ("% copy", lambda r: f(r["pct_copy"], ".1f")), ("TFLOP/s", lambda r: f(r["tflops"], ".0f")),
            ("% mm", lambda r: f(r["pct_mm"], ".0f")), ("regs", lambda r: f(r["regs"], "d")),
            ("spills", lambda r: f(r["spills"], "d")), ("x v0", lambda r: f(r["vs_v0"], ".2f")),
            ("x eager", lambda r: f(r["vs_eager"], ".2f")), ("x comp", lambda r: f(r["vs_compile"], ".2f")),
            ("trajectory", lambda r: r["trajectory"])]
    rows = summary_rows(result)
    cells = [[get(r) for _, get in cols] for r in rows]
    keep = [i for i in range(len(cols)) if any(c[i] not in ("-", "") for c in cells)] or [0, 1]
    hw = result.hardware
    table = Table(title=f"kernelsynth {result.spec.name} on {hw.device_name}"
                        + (f" (copy ceiling {hw.copy_gbps:.0f} GB/s)" if hw.copy_gbps else ""),
                  width=None, pad_edge=False, padding=(0, 1))
    for i in keep:
        name = cols[i][0]
        table.add_column(name, overflow="fold", min_width={"best config": 12, "trajectory": 8}.get(name))
    for c in cells:  # Text, not markup: names and reasons come from candidate files (red team s35 B1)
        table.add_row(*[Text(str(c[i])) for i in keep])
    return table


def print_summary(result: RunResult, console=None) -> None:
    """Print the summary table, the record count (with how to load them) and the rejections."""
    import shutil

    from rich.console import Console
    from rich.markup import escape

    console = console or Console(width=min(SUMMARY_WIDTH, shutil.get_terminal_size((SUMMARY_WIDTH, 24)).columns))
    console.print(summary_table(result))
    for line in hardware.ceiling_lines(result.hardware) if not result.hardware.interpret else []:
        console.print(escape(line), soft_wrap=True)
    table = profile_table(result)
    if table is not None:
        console.print(table)
    other = sorted({p["profile"] for p in profile_summary(result.observations, result.spec.sha256)
                    if p["profile"] != "ncu"})
    for why in other:
        console.print(f"profile: {escape(why)}", soft_wrap=True)  # may quote the profiled program's output
    n_rec = result.n_records
    if n_rec:
        console.print(escape(f"{n_rec} record(s) in {result.dataset_dir}  "
                             f"(datasets.load_dataset('{result.dataset_dir}', '{result.spec.name}'))"), soft_wrap=True)
    for t in result.trajectories:
        if not t["accepted"]:
            # name the trajectory's source: an imported task's ladder (v0 alone) is always rejected, while its
            # v0 -> inductor trajectory may be accepted (session 17's new-user review read it as a failure)
            kept = sorted(o.get("source", "ladder") for o in result.trajectories
                          if o["accepted"] and o["dtype"] == t["dtype"])
            also = f" (accepted for {t['dtype']}: the {', '.join(kept)} trajectory)" if kept else ""
            console.print(f"[yellow]rejected[/yellow] {t['dtype']} {t.get('source', 'ladder')} trajectory{also}: "
                          + escape("; ".join(t["reasons"])))
    console.print(f"end-to-end wall time: {result.wall_s:.1f} s")
