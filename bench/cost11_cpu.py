"""One candidate's protocol cost on this machine, in-process: CPU seconds of jobs.evaluate.

    python bench/cost11_cpu.py <task> <version> [<dtype>] [--repeats N] [--gpu] [--spy OUT.raw]
    python bench/cost11_cpu.py <task> --external FILE [<dtype>] [--repeats N] [--gpu] [--spy OUT.raw]

Plans the task's jobs as a run would (kernelsynth.stages.exploration.Exploration.plan), takes the
first job of ``version`` (and ``dtype``, default the spec's first), evaluates it once to warm the
compile cache, then ``N`` more times (default 3) and prints each evaluation's ``time.process_time``
seconds (CPU time of this process: less sensitive to other load on a shared machine than wall
time), its ``verify_s`` (wall) and the verdict; the warm-up's line has the backend's
``compile_s`` (with an empty ``TRITON_CACHE_DIR``, the compiles at every new specialisation key). Unsandboxed and in-process: a measuring tool for
trusted ladder code, not a way to run untrusted candidates (references/VERIFICATION.md, "Cost per
candidate"). ``--external FILE``: the job of that external candidate file (``class ModelNew``) instead
of a ladder version -- every untrusted check runs (census, audit record, fresh parameters per trial);
``bench/harness_flip.py`` is a flip2d candidate of one torch operator, so on the CPU the harness's own
work is most of what is measured. On a machine without a GPU, set ``TRITON_INTERPRET=1``. ``--spy OUT.raw``: py-spy (on PATH or
/tmp/site/bin) attaches to this process after the warm-up and records the repeats alone, for
``bench/pyspy_fold.py OUT.raw`` (session 13's profile, taken over the whole process, mixed the cold
warm-up into the warm evaluations' shares).
"""

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main(argv):
    gpu = "--gpu" in argv
    argv = [a for a in argv if a != "--gpu"]
    repeats = 3
    if "--repeats" in argv:
        i = argv.index("--repeats")
        repeats = int(argv[i + 1])
        del argv[i:i + 2]
    spy = None  # --spy OUT.raw: py-spy records the repeats only (attached after the warm-up)
    if "--spy" in argv:
        i = argv.index("--spy")
        spy = argv[i + 1]
        del argv[i:i + 2]
    external = None
    if "--external" in argv:
        i = argv.index("--external")
        external = argv[i + 1]
        del argv[i:i + 2]
        argv.insert(1, "external")
    task, version = argv[0], argv[1]
    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import evaluate
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration

    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    dtype = argv[2] if len(argv) > 2 else spec.dtypes[0]
    hw = Hardware(target="h200" if gpu else "cpu", device_name="gpu" if gpu else "cpu", interpret=not gpu,
                  arch="sm_90" if gpu else None)
    ext = None
    if external:
        from kernelsynth.external import ExternalCandidate

        ext = [ExternalCandidate(name=Path(external).stem, file=Path(external).resolve())]
    jobs = Exploration().plan(spec, hw, external=ext, cache_dir=Path(tempfile.mkdtemp(prefix="cost11-cache-")))
    job = next(j for j in jobs if (j.row["role"] == "external" if external else j.row["version"] == version)
               and j.request.dtype == dtype)
    print(f"{task} {version} {dtype} config={job.row['config']} derived={len(job.request.derived_shapes)}")
    t0 = time.process_time()
    res = evaluate(job.request)  # compile and cache
    print(f"warm-up: cpu_s={time.process_time() - t0:.3f} verify_s={res.verify_s:.3f} verdict={res.verdict}"
          f" compile_s={res.compile_s} reason={res.reason[:160]!r}")
    cpu = []
    recorder = None
    if spy:  # the warm-up (cold compiles, an empty reference memo) stays out of the profile
        exe = shutil.which("py-spy") or "/tmp/site/bin/py-spy"
        recorder = subprocess.Popen([exe, "record", "-r", "250", "-f", "raw", "-o", spy, "--pid", str(os.getpid())])
        time.sleep(1.0)
    for r in range(repeats):
        t0 = time.process_time()
        res = evaluate(job.request)
        cpu.append(time.process_time() - t0)
        print(f"repeat {r}: cpu_s={cpu[-1]:.3f} verify_s={res.verify_s:.3f} verdict={res.verdict} trials={res.trials}"
              f" reason={res.reason[:120]!r}")
    if recorder is not None:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=60)
    if cpu:
        print(f"SUMMARY {task} {version} {dtype}: median cpu_s={statistics.median(cpu):.3f} "
              f"min={min(cpu):.3f} verdict={res.verdict}")


if __name__ == "__main__":
    main(sys.argv[1:])
