#!/usr/bin/env bash
# Red team s10 (issue 10 item 8), the GPU-only part, on the H200 (< 3 min; hard timeouts 110 + 45 s):
#   bash bench/h200_redteam10.sh "$OUT/rt10"
# 1. matmul_bias_gelu bfloat16 (ladder cut to v0: eager, cuBLAS): mh1 (addmm hidden from the dispatch mode by
#    torch._C._DisableTorchDispatch, honest Triton when torch.autograd._profiler_enabled(): the kernel census's
#    profiled call), mi1 (addmm, then `addmm` discarded from the harness's mode.ops; torch.profiler.profile.events
#    patched to drop GEMM events and kernels), mq1 (GEMM on an unjoined side stream, a traffic-sized kernel on the
#    timed stream), mh2 (honest split-K); 110 s.
# 2. softmax_rows float32 (ladder v0): sg1 (honest: Triton kernel replayed from a CUDA graph per shape); 45 s.
# Under the given directory: logs, observations, summary.txt (summarize.py: verdict, library_calls,
# foreign_kernels, precision, reason) and the median_ms of each observation (times.txt).
# Look for: mh1, mi1 accepted with library_calls and foreign_kernels empty and a median_ms at v0's (cuBLAS)
# = got through (since fix10c, screen off for matmul: mh1 expected accepted with library_calls "addmm" -- the
# per-call CPU-activity profiler --, mi1 fault tampering at import: torch.profiler.profile.events); mq1 rejected (rule 15's probe clone or rule 17) or accepted with a median_ms far below v0's
# = fake speedup got through; mh2 and sg1 accepted (sg1 with no "(no kernel of its own)"/foreign label).
set -u
OUTDIR=${1:-${OUT:-/tmp}/rt10}
mkdir -p "$OUTDIR/cands/matmul" "$OUTDIR/cands/softmax"
. bench/device_env.sh  # PYTHONPATH, the shared compile cache, bubblewrap from .deb
R=tests/adversarial/redteam_s10
cp $R/matmul/mh1_*.py $R/matmul/mi1_*.py $R/matmul/mq1_*.py $R/matmul/mh2_*.py "$OUTDIR/cands/matmul/"
cp $R/softmax/sg1_*.py "$OUTDIR/cands/softmax/"
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
X=exploration.sources=[external]
# screen off for matmul: mh1 and mi1 name census-evasion entry points (rule 20 refuses them since fix10c);
# off, they meet the run-time views (mh1: the per-call profiler; mi1: the integrity guard at import)
run matmul 110 task=matmul_bias_gelu 'task.dtypes=[bfloat16]' "$X" exploration.screen_sources=false "exploration.extra_candidates=[$OUTDIR/cands/matmul]"
run softmax 45 task=softmax_rows 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/softmax]"
python3 tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/matmul "$OUTDIR"/softmax > "$OUTDIR/summary.txt" 2>&1
python3 - "$OUTDIR"/matmul "$OUTDIR"/softmax > "$OUTDIR/times.txt" 2>&1 <<'PY'
import glob, sys
import pyarrow.parquet as pq
for d in sys.argv[1:]:
    for f in glob.glob(f"{d}/observations/*.parquet") or glob.glob(f"{d}/observations.parquet"):
        for r in pq.read_table(f).to_pylist():
            print(d.rsplit("/", 1)[-1], r.get("name"), r.get("dtype"), r.get("verdict"), "median_ms", r.get("median_ms"),
                  "verify_s", r.get("verify_s"))
PY
cat "$OUTDIR/rc.txt" "$OUTDIR/summary.txt" "$OUTDIR/times.txt" | cut -c1-400
