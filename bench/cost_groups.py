"""Where one candidate's protocol time goes, by trial group and by shape, in this process:

    python bench/cost_groups.py <task> <version> [<dtype>] [--gpu] [--repeats N]

Plans the task's jobs as a run would (kernelsynth.stages.exploration.Exploration.plan, the
GPU plan with ``--gpu``), evaluates the first job of ``version`` (and ``dtype``) once to warm the
compile cache and the reference memo, then ``N`` more times (default 2) with
:func:`kernelsynth.verify.protocol.verify` timed per call (its ``group``: listed, probeK,
derived, timing) and each trial's start stamped (the protocol's ``trial_inputs``), and prints,
for the last repeat: seconds and trials per group, the mean seconds per trial of each group,
and the 12 slowest derived shapes. The per-trial stamps include everything between two trials'
input draws (the candidate call, the reference, the staleness calls of a listed trial, the
integrity pass). Unsandboxed and in-process, like ``bench/cost11_cpu.py``: for trusted ladder
code only. On a machine without a GPU, set ``TRITON_INTERPRET=1``.
"""

import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def main(argv):
    gpu = "--gpu" in argv
    argv = [a for a in argv if a != "--gpu"]
    repeats = 2
    if "--repeats" in argv:
        i = argv.index("--repeats")
        repeats = int(argv[i + 1])
        del argv[i:i + 2]
    task, version = argv[0], argv[1]
    import kernelsynth.jobs as jobs
    import kernelsynth.verify.protocol as protocol
    from kernelsynth.hardware import Hardware
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration

    groups = defaultdict(lambda: [0.0, 0])  # group -> [seconds, trials]
    stamps = []  # (perf_counter, group, shape label) at each trial's input draw
    current = {"group": "?"}
    verify, trial_inputs = jobs.verify, protocol.trial_inputs

    def timed_verify(*args, **kwargs):  # patched before the first evaluation: the guard's snapshot holds it
        current["group"] = kwargs.get("group", "listed")
        t = time.perf_counter()
        rep = verify(*args, **kwargs)
        g = groups[current["group"]]
        g[0] += time.perf_counter() - t
        g[1] += rep.trials
        return rep

    def stamped_inputs(get_inputs, shape, *args, **kwargs):
        stamps.append((time.perf_counter(), current["group"], "x".join(str(v) for v in shape.values())))
        return trial_inputs(get_inputs, shape, *args, **kwargs)

    jobs.verify, protocol.trial_inputs = timed_verify, stamped_inputs

    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    dtype = argv[2] if len(argv) > 2 else spec.dtypes[0]
    hw = Hardware(target="h200" if gpu else "cpu", device_name="gpu" if gpu else "cpu", interpret=not gpu,
                  arch="sm_90" if gpu else None)
    plan = Exploration().plan(spec, hw, cache_dir=Path(tempfile.mkdtemp(prefix="cost-groups-")))
    job = next(j for j in plan if j.row["version"] == version and j.request.dtype == dtype)
    print(f"{task} {version} {dtype} config={job.row['config']} listed={len(job.request.verify_shapes)} "
          f"derived={len(job.request.derived_shapes)}")
    t = time.perf_counter()
    res = jobs.evaluate(job.request)
    print(f"warm-up: {time.perf_counter() - t:.3f} s verify_s={res.verify_s:.3f} verdict={res.verdict} "
          f"reason={res.reason[:160]!r}")
    totals = []
    for r in range(repeats):
        groups.clear()
        stamps.clear()
        res = jobs.evaluate(job.request)
        totals.append(res.verify_s)
        print(f"repeat {r}: verify_s={res.verify_s:.3f} trials={res.trials} verdict={res.verdict}")
    end = time.perf_counter()
    print(f"{'group':<10} {'seconds':>8} {'trials':>6} {'ms/trial':>9}")
    for name, (sec, n) in groups.items():
        print(f"{name:<10} {sec:8.3f} {n:6d} {1e3 * sec / max(n, 1):9.1f}")
    per = [(stamps[i + 1][0] - stamps[i][0] if i + 1 < len(stamps) else end - stamps[i][0], g, s)
           for i, (_, g, s) in enumerate(stamps)]
    derived = sorted((p for p in per if p[1] == "derived"), reverse=True)
    print("slowest derived shapes (s between this trial's draw and the next):")
    for sec, _, s in derived[:12]:
        print(f"  {sec:.4f}  {s}")
    if derived:
        print(f"derived median {statistics.median(p[0] for p in derived) * 1e3:.1f} ms per trial")
    print(f"SUMMARY {task} {version} {dtype}: median verify_s={statistics.median(totals):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
