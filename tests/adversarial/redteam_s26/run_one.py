"""Run one external candidate through the real harness on the task's full CPU plan (in process):
the source screen (rule 20), kernelsynth.jobs.evaluate (the worker's checks) and, when the worker
accepts, the parent's independent check (jobs.oracle + audit.audit_problem, rule 18).

    TRITON_INTERPRET=1 PYTHONPATH=$PWD python tests/adversarial/redteam_s26/run_one.py TASK FILE [DTYPE] [--seed N]
"""
import sys
import tempfile
import time
from pathlib import Path
import dataclasses


def main(argv):
    seed = None
    groups = "--groups" in argv
    argv = [a for a in argv if a != "--groups"]
    if "--seed" in argv:
        i = argv.index("--seed"); seed = int(argv[i + 1]); del argv[i:i + 2]
    task, file = argv[0], argv[1]
    from kernelsynth.hardware import Hardware
    from kernelsynth.jobs import evaluate, oracle
    from kernelsynth.audit import audit_problem
    from kernelsynth.paths import SPECS_DIR
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration
    from kernelsynth.external import ExternalCandidate
    from kernelsynth.screen import screen_source

    if groups:  # print every shape group's precision statistics (rule 23) as the worker judges them
        from kernelsynth.verify import precision as P
        orig = P.PrecisionMeter.check

        def check(self, where):
            st = self.stats()
            print(f"  [group] {where[:60]}: n={self.candidate[1]} low={self.low} ref_low={self.ref_low} "
                  + " ".join(f"{k}={v:.4g}" for k, v in st.items() if isinstance(v, float)), flush=True)
            return orig(self, where)
        P.PrecisionMeter.check = check
    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    dtype = argv[2] if len(argv) > 2 else spec.dtypes[0]
    findings = screen_source(Path(file).read_text())
    if findings:
        print("VERDICT rejected (source screen):", findings)
        return
    hw = Hardware(target="cpu", device_name="cpu", interpret=True, arch=None)
    ext = [ExternalCandidate(name=Path(file).stem, file=Path(file).resolve())]
    jobs = Exploration().plan(spec, hw, external=ext, cache_dir=Path(tempfile.mkdtemp(prefix="rt26-cache-")))
    job = next(j for j in jobs if j.row["role"] == "external" and j.request.dtype == dtype)
    req = job.request
    if seed is not None:
        req = dataclasses.replace(req, seed=seed)
    print(f"{task} {Path(file).name} {dtype} seed={req.seed} listed={req.verify_shapes} "
          f"derived={req.derived_shapes} timing={req.timing_shape} probes={req.probes}", flush=True)
    t0 = time.time()
    res = evaluate(req)
    print(f"worker: verdict={res.verdict} wall={time.time() - t0:.1f}s trials={res.trials}")
    print("reason:", res.reason)
    for k in ("precision_rms", "precision_honest_rms", "precision_bound", "precision_tail", "precision_tail_bound",
              "precision_low", "precision_low_bound", "precision_rel", "precision_rel_bound", "library_calls",
              "foreign_kernels"):
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
