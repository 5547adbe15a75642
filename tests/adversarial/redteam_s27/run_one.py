"""Run one external candidate through the real harness on the CPU plan (in process): the source
screen (rule 20), kernelsynth.jobs.evaluate (the worker's checks; a TamperingError raised out of it is
what the worker turns into a "tampering" rejection) and, when the worker accepts, the parent's
independent check (jobs.oracle + audit.audit_problem, rule 18). Restores the process settings the
candidates of this folder change (autocast, threads, numeric flags) before exiting.

    TRITON_INTERPRET=1 PYTHONPATH=$PWD python tests/adversarial/redteam_s27/run_one.py TASK FILE [DTYPE]
        [--shapes N] [--derived] [--trials T] [--seed S] [--no-probes]
"""
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import torch


def _settings():
    return (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"), torch.get_num_threads(),
            torch.backends.fp32_precision, torch.backends.mkldnn.matmul.fp32_precision)


def main(argv):
    def opt(name, default, conv=int):
        if name in argv:
            i = argv.index(name); v = conv(argv[i + 1]); del argv[i:i + 2]; return v
        return default
    shapes = opt("--shapes", 2)
    trials = opt("--trials", None)
    seed = opt("--seed", None)
    derived = "--derived" in argv
    spy = "--spy" in argv
    noprobes = "--no-probes" in argv
    argv = [a for a in argv if a not in ("--derived", "--no-probes", "--spy")]
    task, file = argv[0], argv[1]
    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import evaluate, oracle
    from kernelsynth.audit import audit_problem
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration
    from kernelsynth.external import ExternalCandidate
    from kernelsynth.screen import screen_source
    from kernelsynth.verify.failures import TamperingError

    if spy:  # log the settings under which the harness computes its float32 reference and honest terms
        from kernelsynth.verify import precision as P
        orig = P.HonestReferences._terms
        seen = {}

        def _terms(self, *a, **k):
            s = (torch.get_float32_matmul_precision(), torch.is_autocast_enabled("cpu"))
            seen[s] = seen.get(s, 0) + 1
            return orig(self, *a, **k)
        P.HonestReferences._terms = _terms
        import atexit
        atexit.register(lambda: print("spy: (matmul precision, cpu autocast) during HonestReferences._terms:", seen))
    before = _settings()
    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    dtype = argv[2] if len(argv) > 2 else spec.dtypes[0]
    findings = screen_source(Path(file).read_text())
    if findings:
        print("VERDICT rejected (source screen):", findings)
        return
    hw = Hardware(target="cpu", device_name="cpu", interpret=True, arch=None)
    ext = [ExternalCandidate(name=Path(file).stem, file=Path(file).resolve())]
    kw = {} if trials is None else {"trials": trials}
    jobs = Exploration(**kw).plan(spec, hw, external=ext, cache_dir=Path(tempfile.mkdtemp(prefix="rt27-cache-")))
    job = next(j for j in jobs if j.row["role"] == "external" and j.request.dtype == dtype)
    req = job.request
    req = dataclasses.replace(req, verify_shapes=req.verify_shapes[:shapes],
                              derived_shapes=req.derived_shapes if derived else [])
    if noprobes:
        req = dataclasses.replace(req, probes=[])
    if seed is not None:
        req = dataclasses.replace(req, seed=seed)
    print(f"{task} {Path(file).name} {dtype} seed={req.seed} listed={req.verify_shapes} "
          f"derived={req.derived_shapes} probes={req.probes}", flush=True)
    t0 = time.time()
    try:
        res = evaluate(req)
    except TamperingError as e:
        print("VERDICT tampering:", e)
        return
    finally:
        after = _settings()
        print("settings before/after:", before, after)
        torch.set_autocast_enabled("cpu", before[0]); torch.set_autocast_dtype("cpu", before[1])
        torch.set_num_threads(before[2]); torch.backends.fp32_precision = before[3]; torch.backends.cuda.matmul.fp32_precision = "none"
        torch.backends.mkldnn.matmul.fp32_precision = before[4]
    print(f"worker: verdict={res.verdict} wall={time.time() - t0:.1f}s trials={res.trials}")
    print("reason:", res.reason)
    for k in ("precision_rms", "precision_honest_rms", "precision_bound", "precision_low", "precision_low_bound",
              "library_calls", "foreign_kernels"):
        print(f"  {k} = {getattr(res, k, None)}")
    if res.verdict == "accepted":
        refs = oracle(req)
        problem = audit_problem(res.audit, refs["references"], req.comparison, req.tol, req.precision)
        print("audit:", problem or "agrees")
        print("VERDICT", "rejected (audit)" if problem else "accepted")
    else:
        print("VERDICT rejected")


if __name__ == "__main__":
    main(sys.argv[1:])
