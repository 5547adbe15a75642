"""The profile step: Nsight Compute (ncu) on one call of each version's fastest verified config.

references/EXPLORATION.md, "Profile". After every observation is timed, the parent picks, per
dtype and spec version, the fastest verified config (:func:`profile_targets`) and sends one
:class:`~kernelsynth.contract.ProfileRequest` per target to a fresh worker
(:func:`kernelsynth.jobs.profile`), which runs ``ncu`` on a small driver
(:mod:`kernelsynth.profile_driver`): it builds the candidate, calls it ``warmup_calls`` times
unprofiled (JIT compilation), then once between ``cudaProfilerStart``/``Stop``, the only call ncu
profiles (``--profile-from-start off``). The profile is never mixed with the timing: it runs in
its own process after all timings, and its GPU times are not latencies (ncu replays each kernel
once per metric pass, caches flushed).

The report is read back as CSV (``ncu --import R --csv --page raw --print-units base``: a header
row of column names, a row of units, then one row per profiled kernel), parsed by
:func:`parse_raw_csv` and summarised by :func:`summarise` into the observation's ``ncu_*``
columns. The summary is of the call's longest kernel; ``ncu_kernels`` says how many there were.

Without a GPU, with ``exploration.profile=false``, with no ``ncu`` or where ncu may not read the
counters (``ERR_NVGPUCTRPERM``), the ``profile`` column records why (``skipped: ...``); this is
not a failure of the run. What a GPU run attempted (a profile, a skip for want of ncu or its
permission, a failure) is written into the observation's file and kept on resume (cached by
its key). Without a GPU or with ``exploration.profile=false`` nothing was attempted: the reason
goes into the run's rows (consolidated table, records, run.json), not into the observation
files, which a resumed run leaves untouched.

This module imports no torch: the parent uses it to plan and parse; the worker to run ncu.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

#: The stall reasons read (``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio``:
#: cycles a warp spent stalled for that reason per issued instruction; WarpStateStats section).
STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
                 "not_selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


#: Metrics that every recent chip has; the fallback set when ncu refuses a metric it does not know.
CORE_METRICS = [
    "gpu__time_duration.sum",                                   # kernel GPU time (ns with base units)
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",       # DRAM throughput, % of peak
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",         # SM throughput, % of peak
    "sm__warps_active.avg.pct_of_peak_sustained_active",        # achieved occupancy, %
    "lts__t_sector_hit_rate.pct",                               # L2 hit rate, %
    "launch__registers_per_thread",
    "smsp__sass_inst_executed_op_local_ld.sum",                 # local loads (spill reloads)
    "smsp__sass_inst_executed_op_local_st.sum",                 # local stores (spills)
]
#: Tensor-pipe utilisation: HMMA (mma.sync, wmma) and, on Hopper, GMMA (wgmma); the larger counts.
TENSOR_METRICS = ["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                  "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"]
METRICS = CORE_METRICS + TENSOR_METRICS + [stall_metric(r) for r in STALL_REASONS]

#: Where ncu is looked for when it is not on PATH (CUDA toolkit and standalone installs).
NCU_PLACES = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda-*/bin/ncu")

#: How many top stall reasons the ``ncu_stalls`` column keeps.
TOP_STALLS = 3


def find_ncu(configured: Optional[str] = None) -> Optional[str]:
    """The ncu executable: ``configured``, else ``ncu`` on PATH, else the newest of
    :data:`NCU_PLACES`; None when there is none."""
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in NCU_PLACES:
        hits = sorted(p for p in glob.glob(pattern) if os.access(p, os.X_OK))
        if hits:
            return hits[-1]
    return None


# ------------------------------------------------------------------------------------ parsing
def _number(text: str) -> Optional[float]:
    """A metric cell as a float: thousands separators dropped; None for n/a or empty cells."""
    t = text.strip().replace(",", "")
    if not t or t.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_raw_csv(text: str) -> List[Dict[str, Any]]:
    """The kernels of ncu's raw-page CSV (``--csv --page raw``): one dict per kernel row with
    ``id``, ``kernel`` (the ``Kernel Name`` column), ``units`` ({metric: unit}) and ``metrics``
    ({metric: float or None}) for every column whose name has ``__`` (a metric). Lines before the
    header (ncu's ``==PROF==`` messages) are skipped. Raises ValueError when there is no header
    row with an ``ID`` and a ``Kernel Name`` column."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') and "Kernel Name" in line), None)
    if start is None:
        raise ValueError("no ncu raw-page CSV header (a row starting with \"ID\" that names \"Kernel Name\")")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    at = {name: i for i, name in enumerate(header)}
    metric_cols = [(i, name) for i, name in enumerate(header) if "__" in name]
    units: Dict[str, str] = {}
    body = rows[1:]
    if body and not (body[0][at["ID"]].strip().isdigit()):  # the units row
        units = {name: body[0][i] for i, name in metric_cols if i < len(body[0])}
        body = body[1:]
    kernels = []
    for r in body:
        if len(r) < len(header) or not r[at["ID"]].strip().isdigit():
            continue
        kernels.append({"id": int(r[at["ID"]]), "kernel": r[at["Kernel Name"]], "units": units,
                        "metrics": {name: _number(r[i]) for i, name in metric_cols}})
    return kernels


def _duration_ms(k: Dict[str, Any]) -> Optional[float]:
    """The kernel's ``gpu__time_duration.sum`` in ms (ncu's unit: ns, us, ms or s)."""
    v = k["metrics"].get("gpu__time_duration.sum")
    if v is None:
        return None
    scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0,
             "s": 1e3, "second": 1e3}.get((k["units"].get("gpu__time_duration.sum") or "ns").strip(), 1e-6)
    return v * scale


def summarise(kernels: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The ``ncu_*`` columns (:class:`kernelsynth.contract.ProfileResult`) of one profiled call:
    the numbers of its longest kernel (by GPU time), the number of kernels and their summed GPU
    time. Raises ValueError when no kernel was profiled (the call launched none in the range)."""
    if not kernels:
        raise ValueError("ncu profiled no kernel in the profiled call")
    main = max(kernels, key=lambda k: _duration_ms(k) or 0.0)
    m = main["metrics"]
    tensor = [m[n] for n in TENSOR_METRICS if m.get(n) is not None]
    local = [m[n] for n in ("smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum")
             if m.get(n) is not None]
    stalls = sorted(((r, m[stall_metric(r)]) for r in STALL_REASONS if m.get(stall_metric(r))),
                    key=lambda x: -x[1])[:TOP_STALLS]
    durations = [d for d in (_duration_ms(k) for k in kernels) if d is not None]
    regs = m.get("launch__registers_per_thread")
    return {
        "profile": "ncu", "ncu_kernel": main["kernel"][:300], "ncu_kernels": len(kernels),
        "ncu_duration_ms": sum(durations) if durations else None,
        "ncu_dram_pct": m.get("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        "ncu_sm_pct": m.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "ncu_tensor_pct": max(tensor) if tensor else None,
        "ncu_occupancy_pct": m.get("sm__warps_active.avg.pct_of_peak_sustained_active"),
        "ncu_l2_hit_pct": m.get("lts__t_sector_hit_rate.pct"),
        "ncu_registers": int(regs) if regs is not None else None,
        "ncu_local_insts": int(sum(local)) if local else None,
        "ncu_stalls": ", ".join(f"{r} {v:.2f}" for r, v in stalls) or None,
        "ncu_metrics": json.dumps({k: v for k, v in m.items() if v is not None}, sort_keys=True),
    }


#: The profile of every target when the ncu executable could not be run (the only skip a run carries over).
NCU_NOT_STARTED = "skipped: ncu could not be started"

#: What ncu prints when the profiled range launched no kernel; it then leaves the report path alone.
NO_KERNELS = "No kernels were profiled"

#: What ncu prints when the driver does not let this user read the performance counters.
PERMISSION_MARKERS = ("ERR_NVGPUCTRPERM", "permission to access NVIDIA GPU Performance Counters")


def refusal(output: str) -> Optional[str]:
    """Why ncu could not profile at all on this machine (a recorded reason, not a failure), or None.
    Read from ncu's own ``==ERROR==`` lines only, and only when ncu wrote no report (the caller):
    the profiled program shares ncu's output, so it could print the same words."""
    output = "\n".join(x for x in output.splitlines() if x.lstrip().startswith("==ERROR=="))
    if any(m in output for m in PERMISSION_MARKERS):
        return ("ncu is not permitted to read the GPU's performance counters (ERR_NVGPUCTRPERM): "
                "profiling needs root or the driver's NVreg_RestrictProfilingToAdminUsers=0")
    if "LibraryNotLoaded" in output or "Failed to initialize the profiler" in output:
        return "ncu could not initialise its profiler on this machine (" + (_first_error(output) or "no error line") + ")"
    return None


def _first_error(output: str) -> str:
    """ncu's first ``==ERROR==`` line, without the marker ("" when there is none)."""
    line = next((x for x in output.splitlines() if "==ERROR==" in x), "")
    return line.replace("==ERROR==", "").strip()[:300]


def unknown_metrics(output: str, metrics: List[str]) -> List[str]:
    """The requested metrics an ncu error line names (a metric this chip or ncu does not have)."""
    errors = "\n".join(x for x in output.splitlines() if "==ERROR==" in x or "==WARNING==" in x)
    return [m for m in metrics if m in errors or m.split(".")[0] in errors]


# ------------------------------------------------------------------------------------ running
def ncu_command(ncu: str, metrics: List[str], report: str, program: List[str]) -> List[str]:
    """The profiling command: only the range between cudaProfilerStart and Stop, clocks left as
    they are (the timings ran at the device's own clocks), the report written to ``report``."""
    return [ncu, "--profile-from-start", "off", "--clock-control", "none", "--target-processes", "all",
            "--metrics", ",".join(metrics), "--force-overwrite", "--export", report, *program]


#: The kernel the driver launches before each profiled call of a batch (kernelsynth/profile_driver.py).
MARKER = "kernelsynth_profile_marker"


def split_calls(kernels: List[Dict[str, Any]], count: int) -> List[List[Dict[str, Any]]]:
    """The kernels of a batch's report, one list per profiled call, markers dropped: each call's
    range starts with one :data:`MARKER` launch. ``count`` 1: every kernel is the one call's.
    Raises ValueError when the report does not hold exactly ``count`` markers, first (a call
    that launched a kernel of that name, or a range ncu missed, would shift the attribution)."""
    if count == 1:
        return [kernels]
    at = [i for i, k in enumerate(kernels) if MARKER in k["kernel"]]
    if len(at) != count or (kernels and at[0] != 0):
        raise ValueError(f"the batch's report has {len(at)} marker kernel(s) for {count} profiled calls"
                         + ("" if not kernels or (at and at[0] == 0) else ", and kernels before the first"))
    return [kernels[a + 1:b] for a, b in zip(at, at[1:] + [len(kernels)])]


def run_ncu(request_file: str, ncu: str, metrics: List[str], timeout_s: float, workdir: str) -> Dict[str, Any]:
    """Profile the driver on ``request_file`` (a pickled ProfileRequest of one candidate) with
    ``ncu``; return the ProfileResult fields (:func:`run_ncu_batch` with one call)."""
    return run_ncu_batch(request_file, ncu, metrics, timeout_s, workdir, 1)[0]


def run_ncu_batch(request_file: str, ncu: str, metrics: List[str], timeout_s: float, workdir: str,
                  count: int) -> List[Dict[str, Any]]:
    """Profile the driver on ``request_file`` (a pickled ProfileRequest with ``count`` candidates,
    the request and its batch) in one ncu run; return the ProfileResult fields of each, in order.
    A metric ncu does not know is dropped and the profile retried once (then once more with
    :data:`CORE_METRICS`); a refusal (counters not permitted) is a ``skipped`` reason; anything
    else that goes wrong is a ``failed`` reason with ncu's first error line, the same for all."""
    return [dict(r) for r in _run_ncu(request_file, ncu, metrics, timeout_s, workdir, count)]


def _run_ncu(request_file: str, ncu: str, metrics: List[str], timeout_s: float, workdir: str,
             count: int) -> List[Dict[str, Any]]:
    env = dict(os.environ)
    # the driver keeps this worker's Triton cache (its kernels were compiled there); ncu deploys
    # its section files under a writable HOME of its own
    env.setdefault("TRITON_CACHE_DIR", os.path.join(env.get("HOME") or workdir, ".triton", "cache"))
    env["HOME"] = os.path.join(workdir, "home")
    os.makedirs(env["HOME"], exist_ok=True)
    env["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(sys.path) if p and os.path.isdir(p))
    program = [sys.executable, "-s", "-m", "kernelsynth.profile_driver", request_file]
    report = os.path.join(workdir, "profile")
    deadline = time.monotonic() + timeout_s
    tried: List[List[str]] = []
    while True:
        tried.append(list(metrics))
        left = deadline - time.monotonic()
        if left <= 5:
            return [{"profile": f"failed: ncu did not finish within {timeout_s:.0f} s"}] * count
        if os.path.exists(report + ".ncu-rep"):  # only a report this ncu run writes is read
            os.remove(report + ".ncu-rep")
        try:
            out = subprocess.run(ncu_command(ncu, metrics, report, program), capture_output=True, text=True,
                                 timeout=left, env=env, cwd=workdir)
        except subprocess.TimeoutExpired:
            return [{"profile": f"failed: ncu did not finish within {timeout_s:.0f} s"}] * count
        except OSError as e:
            return [{"profile": f"{NCU_NOT_STARTED} ({e})"}] * count
        output = out.stdout + "\n" + out.stderr
        if NO_KERNELS in output:  # the file, if any, is not ncu's: a profiled program planted it (red team s35 C2)
            return [{"profile": "failed: ncu profiled no kernel (" + NO_KERNELS + ")"}] * count
        if out.returncode == 0 and os.path.isfile(report + ".ncu-rep"):
            break  # a report first: the profiled program's own output may contain any text (red team s35 C)
        why = refusal(output)
        if why:
            return [{"profile": f"skipped: {why}"}] * count
        bad = unknown_metrics(output, metrics)
        if bad and len(tried) < 3:
            metrics = [m for m in metrics if m not in bad]
            continue
        if metrics != CORE_METRICS and len(tried) < 3 and "metric" in output.lower():
            metrics = list(CORE_METRICS)
            continue
        app = [x.strip() for x in output.strip().splitlines() if x.strip() and not x.startswith("==")]
        why = "; ".join(x for x in (_first_error(output), app[-1] if app else "") if x)
        return [{"profile": f"failed: ncu exited {out.returncode}: {why}"[:1000]}] * count
    try:
        exported = subprocess.run([ncu, "--import", report + ".ncu-rep", "--csv", "--page", "raw",
                                   "--print-units", "base"], capture_output=True, text=True,
                                  timeout=max(10.0, deadline - time.monotonic()), env=env, cwd=workdir)
        calls = split_calls(parse_raw_csv(exported.stdout), count)
    except (subprocess.SubprocessError, OSError, ValueError) as e:
        return [{"profile": f"failed: reading the ncu report: {e}"[:1000]}] * count
    results = []
    for kernels in calls:
        try:
            result = summarise(kernels)
        except ValueError as e:
            results.append({"profile": f"failed: reading the ncu report: {e}"[:1000]})
            continue
        if tried[-1] != tried[0]:
            dropped = sorted(set(tried[0]) - set(tried[-1]))
            result["ncu_metrics"] = json.dumps(dict(json.loads(result["ncu_metrics"]), _not_collected=dropped),
                                               sort_keys=True)
        results.append(result)
    return results


# ------------------------------------------------------------------------------------ planning
def profile_targets(observations: List[Dict[str, Any]], spec_sha256: str) -> List[Dict[str, Any]]:
    """The observations to profile: per dtype and spec version (role ``candidate``), the fastest
    verified timed config (ties: by config). External candidates and baselines are not profiled."""
    best: Dict[tuple, Dict[str, Any]] = {}
    for o in observations:
        if o["role"] != "candidate" or o["verdict"] != "accepted" or o["spec_sha256"] != spec_sha256:
            continue
        key = (o["dtype"], o["version"])
        cur = best.get(key)
        rank = (o["median_ms"] if o.get("median_ms") is not None else float("inf"), o["config"])
        if cur is None or rank < (cur["median_ms"] if cur.get("median_ms") is not None else float("inf"),
                                  cur["config"]):
            best[key] = o
    return [best[k] for k in sorted(best)]


def needs_profile(row: Dict[str, Any]) -> bool:
    """Whether the step still has to profile this target: a profile attempted on a GPU (profiled,
    skipped for want of ncu or its permission, or failed) is kept with its observation, cached by
    its key, so a resumed run does not repeat it."""
    return row.get("profile") is None


def unattempted(interpret: bool, enabled: bool) -> Optional[str]:
    """Why the step attempts nothing in a run (no GPU, or ``exploration.profile=false``), or None."""
    if interpret:
        return "no GPU: the Triton interpreter runs no hardware counters"
    if not enabled:
        return "exploration.profile=false"
    return None


def mark_unattempted(rows: List[Dict[str, Any]], spec_sha256: str, reason: str) -> List[Dict[str, Any]]:
    """Set ``profile`` to ``skipped: <reason>`` on every target not yet profiled, in the rows only
    (exploration and a merge do the same, so a merged dataset equals one run's). Returns them."""
    marked = [o for o in profile_targets(rows, spec_sha256) if needs_profile(o)]
    for o in marked:
        o["profile"] = f"skipped: {reason}"
    return marked


def skipped(reason: str) -> Dict[str, Any]:
    """The ProfileResult columns of a profile that did not run, with its reason."""
    return {"profile": f"skipped: {reason}"}


def claim(o: Dict[str, Any]) -> Optional[str]:
    """The profile as a record cites it: ``ncu (one call, kernel K): DRAM 92.1% of peak, SM 40.2%,
    tensor pipe 0.0%, achieved occupancy 85.0%, L2 hit 3.1%, 32 registers, 0 local-memory
    instructions; top stalls long_scoreboard 5.12 cycles/issue, ...``; or the skip/failure reason;
    None when the observation was never profiled."""
    status = o.get("profile")
    if not status:
        return None
    if status != "ncu":
        return f"Profile: {status}."
    f = lambda v, s: "n/a" if v is None else format(v, s)  # noqa: E731
    parts = [f"DRAM {f(o.get('ncu_dram_pct'), '.1f')}% of peak", f"SM {f(o.get('ncu_sm_pct'), '.1f')}%"]
    if o.get("ncu_tensor_pct") is not None:
        parts.append(f"tensor pipe {o['ncu_tensor_pct']:.1f}%")
    parts += [f"achieved occupancy {f(o.get('ncu_occupancy_pct'), '.1f')}%",
              f"L2 hit {f(o.get('ncu_l2_hit_pct'), '.1f')}%"]
    if o.get("ncu_registers") is not None:
        parts.append(f"{o['ncu_registers']} registers/thread")
    if o.get("ncu_local_insts") is not None:
        parts.append(f"{o['ncu_local_insts']} local-memory (spill) instructions")
    text = (f"ncu (one call of this config, {o.get('ncu_kernels') or 1} kernel(s); numbers of "
            f"{_short(o.get('ncu_kernel'))}): " + ", ".join(parts))
    if o.get("ncu_stalls"):
        text += f"; top stalls (cycles per issued instruction): {o['ncu_stalls']}"
    return text + "."


def short_claim(o: Dict[str, Any]) -> Optional[str]:
    """The profile in a few words (``ncu: DRAM 92.1% of peak, 0 local-memory (spill) instructions``),
    or None when the observation was not profiled."""
    if o.get("profile") != "ncu":
        return None
    parts = [f"DRAM {o['ncu_dram_pct']:.1f}% of peak" if o.get("ncu_dram_pct") is not None else None,
             f"tensor pipe {o['ncu_tensor_pct']:.1f}%" if o.get("ncu_tensor_pct") else None,
             f"{o['ncu_local_insts']} local-memory (spill) instructions" if o.get("ncu_local_insts") is not None
             else None]
    return "ncu: " + ", ".join(p for p in parts if p)


def _short(name: Optional[str]) -> str:
    name = (name or "?").split("(")[0]
    return name if len(name) <= 60 else name[:57] + "..."


def request_file(workdir: str, payload: Any) -> str:
    """Pickle ``payload`` (a ProfileRequest) into ``workdir`` for the driver; returns the path."""
    import pickle

    path = os.path.join(workdir, "request.pkl")
    with open(path, "wb") as f:
        pickle.dump(payload, f)
    return path


def temp_workdir() -> str:
    return tempfile.mkdtemp(prefix="kernelsynth-profile-")


def cleanup(workdir: str) -> None:
    shutil.rmtree(Path(workdir), ignore_errors=True)
