"""A first look at the catalog on a GPU: every task's versions through the full protocol, in this process.

    python bench/catalog_smoke.py [--dtype bfloat16] [--budget-s 200] [task ...]

For each task (default: every task found), plans its jobs as a GPU run would
(kernelsynth.stages.exploration.Exploration.plan), then evaluates the first config of each
version, and the eager baseline, in ``--dtype`` (a task without it: its first dtype) with
:func:`kernelsynth.jobs.evaluate` -- the whole verification protocol and the timing, but
in-process and unsandboxed, with no independent check, no torch.compile baseline and no search
over configs. A screening tool for the spec's own (trusted) ladder code, not a run: the numbers
it prints are single configs, not the best ones, and are not records. Stops starting new tasks
after ``--budget-s`` seconds. One line per evaluation: task, version, dtype, config, verdict,
median ms, x eager, first line of the reason.
"""

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", nargs="*")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--budget-s", type=float, default=200.0)
    args = ap.parse_args(argv)
    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import evaluate
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration
    from kernelsynth.tasks import discover

    tasks = discover()
    names = args.tasks or sorted(tasks)
    hw = Hardware(target="h200", device_name="gpu", interpret=False, arch="sm_90")
    cache = Path(tempfile.mkdtemp(prefix="smoke-cache-"))
    start = time.monotonic()
    print(f"{'task':<20} {'version':<8} {'dtype':<9} {'verdict':<9} {'ms':>9} {'x eager':>8}  config / reason")
    for name in names:
        if time.monotonic() - start > args.budget_s:
            print(f"{name:<20} not run: the budget of {args.budget_s:.0f} s was spent")
            continue
        try:
            spec = load_spec(tasks[name], task_folder=True)
            dtype = args.dtype if args.dtype in spec.dtypes else spec.dtypes[0]
            jobs = [j for j in Exploration().plan(spec, hw, cache_dir=cache) if j.request.dtype == dtype]
        except Exception as e:  # a broken spec is a finding, not the end of the screen
            print(f"{name:<20} spec error: {type(e).__name__}: {str(e)[:200]}")
            continue
        firsts, seen = [], set()
        for j in jobs:
            v = j.row["version"]
            if v in seen or v == "compile":
                continue
            seen.add(v)
            firsts.append(j)
        eager_ms = None
        for j in sorted(firsts, key=lambda j: j.row["version"] != "eager"):
            try:
                res = evaluate(j.request)
                ms = res.median_ms
                reason = (res.reason or "").splitlines()[0][:160] if res.reason else j.row["config"]
                verdict = res.verdict
            except Exception as e:
                ms, verdict = None, "error"
                reason = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                traceback.print_exc(limit=2, file=sys.stderr)
            if j.row["version"] == "eager":
                eager_ms = ms
            ratio = f"{eager_ms / ms:8.2f}" if ms and eager_ms else f"{'-':>8}"
            cell = f"{ms:9.4f}" if ms else f"{'-':>9}"
            print(f"{name:<20} {j.row['version']:<8} {dtype:<9} {verdict:<9} {cell} {ratio}  {reason}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
