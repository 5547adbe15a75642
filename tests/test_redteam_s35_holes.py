"""Red team s35's findings, each with its failing input (BENCHMARKS.md / issue 14's closing note).

B: an external candidate named like a ladder version or a baseline (``v0.py``, ``eager.py``,
``compile.py``) was keyed by version only in the console summary: it replaced the ladder's v0 row
(every "x v0" ratio became the external's), and an accepted external ``eager`` was overwritten by the
empty baseline group, whose rejected-row branch then crashed on an empty reason (IndexError).
"""
from types import SimpleNamespace

from kernelsynth.engine import summary_rows


def _obs(version, role, ms, verdict="accepted", reason=""):
    return {"dtype": "float32", "spec_sha256": "S", "version": version, "role": role, "median_ms": ms,
            "verdict": verdict, "reason": reason, "config": "{}", "name": version, "achieved_gbps": None,
            "pct_of_copy_ceiling": None}


def _result(obs):
    spec = SimpleNamespace(dtypes=["float32"], sha256="S", baselines=["eager", "compile"],
                           candidates=[SimpleNamespace(version="v0"), SimpleNamespace(version="v1")])
    return SimpleNamespace(spec=spec, observations=obs, trajectories=[])


def test_an_external_named_like_a_version_or_baseline_keeps_its_own_row():
    obs = [_obs("v0", "candidate", 4.0), _obs("v1", "candidate", 2.0), _obs("eager", "baseline", 3.0),
           _obs("compile", "baseline", 1.0),
           _obs("v0", "external", 100.0), _obs("compile", "external", 0.5), _obs("v1", "external", None, "rejected", "")]
    rows = {(r["version"], r["trajectory"]): r for r in summary_rows(_result(obs))}
    ladder_v1 = next(r for r in summary_rows(_result(obs)) if r["version"] == "v1" and r["trajectory"] != "external"
                     and not r["trajectory"].startswith("rejected:"))
    assert ladder_v1["median_ms"] == 2.0
    assert ladder_v1["vs_v0"] == 2.0          # the ladder's v0 (4.0 ms), not the external v0.py (100 ms)
    assert ladder_v1["vs_compile"] == 0.5     # torch.compile's 1.0 ms, not the external compile.py's 0.5 ms
    assert rows[("v0", "external")]["median_ms"] == 100.0
    assert rows[("v1", "rejected: no reason recorded")]["median_ms"] is None


def test_an_accepted_external_named_eager_on_the_cpu_does_not_crash_the_summary():
    # on the CPU the baselines are not timed: the baseline group "eager" is empty
    obs = [_obs("v0", "candidate", None), _obs("v1", "candidate", None), _obs("eager", "external", None)]
    rows = summary_rows(_result(obs))
    ext = [r for r in rows if r["version"] == "eager"]
    assert len(ext) == 1 and ext[0]["trajectory"] == "external" and ext[0]["configs_ok"] == "1/1"
