"""Rule 15's timed inputs on the H200 (session 9, bench/h200_memo9.sh): the harness's own timing
loop (:func:`kernelsynth.jobs._time`, CUDA events, L2 clear, the last and the probe call checked)
at matmul_bias_gelu's timing shape 4096^3 float32, run twice per candidate -- ``timed_fresh`` off
(one rolling element per input per call, the old rule) and on (a fresh draw per call, what the
planner now sets for compute-bound tasks). Candidates: the task's v0 (eager: cuBLAS TF32) and v1
(Triton), honest, whose median must not move; tests/adversarial/s9/mm_exact_incremental_memo.py,
an always-right incremental memo, whose median under the old rule is a fake speedup (it
recomputes one row and a column or two) and under fresh inputs the whole GEMM plus its compares.
Prints one line per (candidate, mode): median_ms, p20/p80, the wall seconds of the timing call
(the per-call cost of the fresh draw shows there), and whether the checked outputs passed."""

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kernelsynth import jobs  # noqa: E402
from kernelsynth.loading import import_file  # noqa: E402
from kernelsynth.verify import VerificationFailure  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = True
ref_mod = import_file(ROOT / "specs" / "matmul_bias_gelu" / "reference.py")
shape = {"M": 4096, "N": 4096, "K": 4096}
dev = torch.device("cuda")
cands = {
    "v0_eager": lambda: ref_mod.Model().to(dev),
    "v1_fused_epilogue(128x128)": lambda: import_file(ROOT / "specs" / "matmul_bias_gelu" / "kernels" /
                                                     "v1_fused_epilogue.py").ModelNew(BLOCK_M=128, BLOCK_N=128),
    "s9_mm_exact_incremental_memo": lambda: import_file(ROOT / "tests" / "adversarial" / "s9" /
                                                       "mm_exact_incremental_memo.py").ModelNew(),
}
policy = SimpleNamespace(dtype=torch.float32, device=dev, guard=None, threads_before=None,
                         tol={"atol": 5e-3, "rtol": 5e-3})
print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, shape {shape} float32")
for name, make in cands.items():
    for fresh in (False, True):
        p = SimpleNamespace(timing_shape=shape, seed=0, timed_fresh=fresh, comparison="allclose", tol=policy.tol,
                            warmup_ms=25, rep_ms=100, timing_repeats=2, reference_ops=[])
        model, ref = make().eval(), ref_mod.Model().to(dev).eval()
        start = time.perf_counter()
        try:
            res = jobs._time(model, ref, ref_mod, p, policy, out_dtype=torch.float32)
            verdict = "checked outputs OK"
        except VerificationFailure as e:
            res, verdict = {}, f"REJECTED: {str(e)[:160]}"
        wall = time.perf_counter() - start
        print(f"{name:32s} timed_fresh={str(fresh):5s} median_ms={res.get('median_ms', float('nan')):8.3f} "
              f"p20={res.get('p20_ms', float('nan')):8.3f} p80={res.get('p80_ms', float('nan')):8.3f} "
              f"timing_wall_s={wall:6.2f} {verdict}", flush=True)
        del model, ref
        torch.cuda.empty_cache()
