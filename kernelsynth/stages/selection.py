"""Selection: keep only trajectories that are correct and really faster, with every rejection's reason.

Input: observation rows. Output: one trajectory per (task, dtype), accepted or rejected, with the
reasons, written to ``<run dir>/trajectories.parquet``. The rules are references/SELECTION.md:

1. every version of the ladder has a verified observation (every trial of every shape passed);
   with ``require_all_configs_correct`` a single wrong config rejects the version; a version
   whose call dispatches one of the spec's ``reference_ops`` (a fallback to PyTorch), or any
   operator that does arithmetic (``library_calls``: the census of VERIFICATION.md rule 14) or,
   on a GPU, launches a kernel that is not its own (``foreign_kernels``), rejects it, except a v0
   the spec marks ``allow_reference_ops`` (the ladder may start from eager PyTorch);
2. each version is represented by its fastest verified config (by median latency);
3. timed runs only: no chosen latency is below the roofline floor -- decided in exploration
   (:func:`~kernelsynth.stages.exploration.timing_integrity`), which rejects such an
   observation, so it never represents a version here;
4. timed runs only: the repeated timings of each chosen version agree within ``max_timing_spread``;
5. timed runs only: the final answer -- the fastest verified version -- beats the first (v0) by
   at least ``min_speedup``. A later version that does not improve stays in the trajectory as
   evidence ("no gain"); it does not reject the case;
6. at least one chosen version is a kernel: neither the reference (a v0 marked
   ``allow_reference_ops``) nor a fallback to it.
With the ``inductor`` candidate source, each dtype with an ``inductor`` observation gets a second
trajectory, v0 -> inductor (the ladder's first version, then TorchInductor's generated code),
judged by the same rules: a generated version that calls a library kernel (``extern_kernels``)
is rejected by rule 1 like any other.
On the interpreter (no timings) rules 3-5 cannot be checked: the trajectory is accepted on
correctness alone and marked ``performance_verified = false``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional

from dataclasses import dataclass

import pyarrow as pa

from .. import backends, inductor
from ..config import SelectionConfig as _D  # the defaults, written once
from ..spec import TaskSpec
from ..store import atomic_write_table, content_key, rows_to_table

log = logging.getLogger(__name__)

TRAJECTORY_SCHEMA = pa.schema([
    ("trajectory_id", pa.string()),
    ("task", pa.string()),
    ("dtype", pa.string()),
    ("accepted", pa.bool_()),
    ("performance_verified", pa.bool_()),
    ("reasons", pa.list_(pa.string())),
    ("versions", pa.list_(pa.string())),        # version labels in ladder order
    ("observation_keys", pa.list_(pa.string())),  # the chosen observation of each version (null: none)
    ("baseline_keys", pa.list_(pa.string())),     # chosen baseline observations (eager, compile)
    ("speedup_best_vs_first", pa.float64()),
    ("source", pa.string()),                      # where the versions after v0 come from: ladder, inductor
])


@dataclass(frozen=True)
class _Generated:
    """The generated version of an ``inductor`` trajectory, as judge() reads a ladder version."""

    version: str = inductor.VERSION
    backend: str = "inductor"
    role: str = "inductor"
    allow_reference_ops: bool = False


def _fastest(obs: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    ok = [o for o in obs if o["verdict"] == "accepted"]
    if not ok:
        return None
    return min(ok, key=lambda o: (o["median_ms"] if o["median_ms"] is not None else float("inf"), o["config"]))


class Selection:
    """See module docstring; settings are documented in conf/selection/default.yaml."""

    def __init__(self, min_speedup: float = _D.min_speedup, max_timing_spread: float = _D.max_timing_spread,
                 require_all_configs_correct: bool = _D.require_all_configs_correct):
        self.min_speedup, self.max_timing_spread = min_speedup, max_timing_spread
        self.require_all_configs_correct = require_all_configs_correct

    def run(self, spec: TaskSpec, observations: List[Dict[str, Any]], run_dir: Optional[Path] = None
            ) -> List[Dict[str, Any]]:
        """Build and judge one trajectory per dtype; write trajectories.parquet when ``run_dir``."""
        by = defaultdict(list)
        for o in observations:
            if o["task"] == spec.name and o["spec_sha256"] == spec.sha256:
                by[(o["dtype"], o["role"], o["version"])].append(o)
        out = []
        for dtype in spec.dtypes:
            if any(d == dtype for d, _, _ in by):
                out.append(self.judge(spec, dtype, by))
            if (dtype, "inductor", inductor.VERSION) in by:  # the inductor source: v0 -> generated code
                out.append(self.judge(spec, dtype, by, source="inductor"))
        if run_dir is not None:
            atomic_write_table(Path(run_dir) / "trajectories.parquet", rows_to_table(out, TRAJECTORY_SCHEMA))
        for t in out:
            log.info("trajectory %s %s (%s): %s%s", spec.name, t["dtype"], t["source"], "accepted" if t["accepted"] else "rejected",
                     "" if t["accepted"] else " (" + "; ".join(t["reasons"]) + ")")
        return out

    def judge(self, spec: TaskSpec, dtype: str, by, source: str = "ladder") -> Dict[str, Any]:
        """One trajectory of ``dtype``: the spec's ladder (``source="ladder"``), or its v0 followed by
        TorchInductor's generated code (``source="inductor"``), judged by the same rules."""
        reasons: List[str] = []
        chosen: List[Optional[Dict[str, Any]]] = []
        seen = [o for (d, _, _), rows in by.items() if d == dtype for o in rows]
        interpret = bool(seen) and all(o["interpret"] for o in seen)
        # On the interpreter, versions whose backend needs a GPU cannot run: the ladder is judged without them.
        ladder = [c for c in spec.candidates if not (interpret and backends.get(c.backend).needs_gpu)]
        if source == "inductor":
            ladder = ladder[:1] + [_Generated()]
        for cand in ladder:
            obs = by.get((dtype, getattr(cand, "role", "candidate"), cand.version), [])
            best = _fastest(obs)
            if not obs:
                reasons.append(f"{cand.version}: no observation")
            elif best is None:
                first = next(o for o in obs if o["verdict"] != "accepted")
                reasons.append(f"{cand.version}: no config verified (e.g. {first['config']}: "
                               f"{first['reason'].splitlines()[0][:300]})")
            elif self.require_all_configs_correct:
                bad = [o for o in obs if o["verdict"] != "accepted"]
                if bad:
                    reasons.append(f"{cand.version}: {len(bad)} of {len(obs)} configs rejected "
                                   f"(e.g. {bad[0]['config']}: {bad[0]['reason'].splitlines()[0][:300]})")
            if best is not None and best.get("reference_ops_used") and not cand.allow_reference_ops:
                reasons.append(f"{cand.version}: calls the reference's own operator(s) "
                               f"{best['reference_ops_used']}: a PyTorch fallback, not a kernel record")
            elif best is not None and (best.get("library_calls") or best.get("foreign_kernels")) \
                    and not cand.allow_reference_ops:
                what = "; ".join(x for x in (best.get("library_calls") and f"operator(s) {best['library_calls']}",
                                             best.get("foreign_kernels") and f"kernel(s) {best['foreign_kernels']}") if x)
                reasons.append(f"{cand.version}: library calls ({what[:300]}): arithmetic done by a library, "
                               "not a kernel record")
            chosen.append(best)
        kernels = [c for cand, c in zip(ladder, chosen) if c is not None and not cand.allow_reference_ops
                   and not c.get("reference_ops_used")]
        if not kernels:
            hint = ""
            if source == "ladder" and len(spec.candidates) == 1:  # an imported problem: only the reference as v0
                hint = (" (this task's ladder is v0 alone: add versions to its spec, or run with "
                        "'exploration.sources=[ladder,inductor]' to take TorchInductor's kernel as one)")
            reasons.append("no verified version other than the reference or a fallback to it: a trajectory "
                           "needs at least one verified kernel" + hint)
        timed = all(c is not None and c["median_ms"] is not None for c in chosen)
        speedup = None
        if timed:
            for c in chosen:
                if c["timing_spread"] is not None and c["timing_spread"] > self.max_timing_spread:
                    reasons.append(f"{c['version']}: repeated timings differ by {100 * c['timing_spread']:.1f}% "
                                   f"(> {100 * self.max_timing_spread:.0f}%)")
            best = min(chosen, key=lambda c: c["median_ms"])
            speedup = chosen[0]["median_ms"] / best["median_ms"]
            if speedup < self.min_speedup:
                reasons.append(f"the fastest version {best['version']} is {speedup:.2f}x {chosen[0]['version']}, "
                               f"below the minimum speedup {self.min_speedup:.2f}x")
        baselines = [_fastest(by.get((dtype, "baseline", b), [])) for b in spec.baselines]
        keys = [c["key"] if c else None for c in chosen]
        return {
            "trajectory_id": content_key(task=spec.name, spec=spec.sha256, dtype=dtype, keys=keys),
            "source": source,
            "task": spec.name, "dtype": dtype, "accepted": not reasons,
            "performance_verified": timed and not reasons,
            "reasons": reasons, "versions": [c.version for c in ladder], "observation_keys": keys,
            "baseline_keys": [b["key"] for b in baselines if b is not None], "speedup_best_vs_first": speedup,
        }

