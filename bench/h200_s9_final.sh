#!/usr/bin/env bash
# Session 9's last H200 call (issue 10, < 220 s; hard timeouts 95 + 60 + 55 s): the session-9 fixes of
# memo9 and num9 on the GPU, in three runs, sandbox on, no baselines, no profile:
#   bash bench/h200_s9_final.sh "$OUT/s9"
# 1. flip2d float32, v0 + redteam_s8 fo1 (ring of outputs: rule 10's kept outputs), fs1 (wrong past
#    16384 columns), fs2 (int32 offsets: the > 2^31-element shape), fh1 (honest);
# 2. matmul_bias_gelu float32, v0 + mm1 (incremental checksum memo), mc1 (first-call calibration),
#    ms1 (K % 64 == 32), tests/adversarial/s9 mm_exact_incremental_memo (always right: accepted, and
#    timed with fresh inputs, rule 15, at about a full GEMM's latency or more);
# 3. softmax_rows bfloat16, the whole ladder under the mask probe (v2 CUDA fixed for masked runs) +
#    ss1, sr1 and redteam_s7 sh1 (honest).
# summary.txt: verdict and reason per observation; cost.txt: bench/protocol_cost.py per run.
set -u
OUTDIR=${1:-${OUT:-/tmp}/s9}
C="$OUTDIR/cands"; mkdir -p "$C/flip" "$C/mm" "$C/softmax"
if [ -f bench/device_env.sh ]; then . bench/device_env.sh; fi
R=tests/adversarial/redteam_s8
cp $R/flip/fo1_*.py $R/flip/fs1_*.py $R/flip/fs2_*.py $R/flip/fh1_*.py "$C/flip/"
cp $R/matmul/mm1_*.py $R/matmul/mc1_*.py $R/matmul/ms1_*.py tests/adversarial/s9/mm_exact_incremental_memo.py "$C/mm/"
cp $R/softmax/ss1_*.py $R/softmax/sr1_*.py tests/adversarial/redteam_s7/softmax/sh1_*.py "$C/softmax/"
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.progress=false exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
run flip 95 task=flip2d 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$C/flip]"
run matmul 60 task=matmul_bias_gelu 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$C/mm]"
run softmax 55 task=softmax_rows 'task.dtypes=[bfloat16]' "exploration.sources=[ladder,external]" "exploration.extra_candidates=[$C/softmax]"
python3 tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/flip "$OUTDIR"/matmul "$OUTDIR"/softmax > "$OUTDIR/summary.txt" 2>&1
for d in flip matmul softmax; do echo "== $d"; python3 bench/protocol_cost.py "$OUTDIR/$d"; done > "$OUTDIR/cost.txt" 2>&1
cat "$OUTDIR/rc.txt" "$OUTDIR/summary.txt" "$OUTDIR/cost.txt" | cut -c1-400
