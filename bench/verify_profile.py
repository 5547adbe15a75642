"""Where one candidate's verification time goes: cProfile of jobs.evaluate, in this process.

    python bench/verify_profile.py <task> <version> [<dtype>] [--gpu] [--top=N]

Plans the task's jobs as a run would (kernelsynth.stages.exploration.Exploration.plan), takes the
first job of ``version`` (and ``dtype``, default the spec's first), evaluates it twice (the first
warms the compile cache) and prints verify_s / timing_s and the N (default 25) functions with the most
cumulative time, then with the most own time, in the second evaluation. Unsandboxed and in-process: a measuring tool for trusted
ladder code, not a way to run untrusted candidates. Used for references/VERIFICATION.md ("Cost per
candidate"). On a machine without a GPU, ``TRITON_INTERPRET=1`` and the task's interpreter shapes.
"""

import cProfile
import io
import pstats
import sys
import tempfile
from pathlib import Path


def main(argv):
    gpu = "--gpu" in argv
    args = [a for a in argv if a != "--gpu" and not a.startswith("--top=")]
    task, version = args[0], args[1]
    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import evaluate
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration

    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    dtype = args[2] if len(args) > 2 else spec.dtypes[0]
    hw = Hardware(target="h200" if gpu else "cpu", device_name="gpu" if gpu else "cpu", interpret=not gpu,
                  arch="sm_90" if gpu else None)
    jobs = Exploration().plan(spec, hw, cache_dir=Path(tempfile.mkdtemp(prefix="vp-cache-")))
    job = next(j for j in jobs if j.row["version"] == version and j.request.dtype == dtype)
    print(f"{task} {version} {dtype} config={job.row['config']} derived={job.request.derived_shapes}")
    evaluate(job.request)  # compile and cache
    prof = cProfile.Profile()
    prof.enable()
    res = evaluate(job.request)
    prof.disable()
    print(f"verdict={res.verdict} verify_s={res.verify_s:.3f} timing_s={res.timing_s} first_call_s={res.first_call_s:.3f}"
          f" trials={res.trials} reason={res.reason[:200]!r}")
    top = int(next((a.split("=", 1)[1] for a in argv if a.startswith("--top=")), 25))
    for order in ("cumulative", "tottime"):
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats(order).print_stats(top)
        print(f"== by {order}")
        print(s.getvalue())


if __name__ == "__main__":
    main(sys.argv[1:])
