#!/usr/bin/env bash
# Red team s11 (issue 10 item 8), the GPU part, on the H200 (<= 150 s; hard timeouts 55 + 55 + 35 s; two trials per listed shape):
#   bash bench/h200_redteam11.sh "$OUT/rt11"
# 1. matmul_bias_gelu float32 (ladder cut to v0: eager, cuBLAS): mw1 (TF32 in verified calls, float16 operands in
#    every call without the poisoning mode: timed calls, kernel census) and its twin mw1twin (the same file with
#    CHEAT = False: always TF32), mo1 (addmm through _op_dk below the Python key), mh3 (honest bfloat16x3); 55 s.
# 2. conv_relu_maxpool float32 (v0: eager cuDNN): cw1 + twin cw1twin (as mw1), co1 (cudnn_convolution through
#    _op_dk + Triton epilogue), cp1 (packed weights cached on torch.initial_seed()), ch1 (honest Winograd); 55 s.
# 3. flip2d float32 (v0): fo1 (aten flip through _op_dk + Triton copy), fo2 (the same, no kernel of its own: empty-grid
#    placeholders named after the profiled flip kernels), ft1 (identity memo + aten::flip overridden with
#    torch.library), fh5 (honest persistent grid); 35 s.
# Under the given directory: logs, observations, summary.txt (summarize.py: verdict, library_calls,
# foreign_kernels, precision, reason) and times.txt (median_ms, verify_s of every observation).
# Look for: mw1 and cw1 accepted with a median_ms clearly below their twins' (a fake speedup: float16 tensor-core
# rate timed, TF32 verified); mo1, co1, fo1, fo2 labelled (library_calls or foreign_kernels non-empty) or got
# through (both empty); ft1 accepted = the torch.library override held on the GPU too; cp1 accepted (expected:
# nothing on the GPU differs); mh3, ch1, fh5 accepted (honest). A run cut by its timeout: see its .log.
# Session 12: RT_SKIP_PAIRS=1 leaves out the mw1/cw1 pairs (rejected on the H200 in session 11);
# RT_PARALLEL=1 starts the three runs at once (they share the GPU through its lock: only the workers'
# start-up overlaps); RT_MATMUL_S, RT_CONV_S, RT_FLIP_S replace the 55/55/35 s limits.
set -u
OUTDIR=${1:-${OUT:-/tmp}/rt11}
mkdir -p "$OUTDIR/cands/matmul" "$OUTDIR/cands/conv" "$OUTDIR/cands/flip"
. bench/device_env.sh  # PYTHONPATH, the shared compile cache, bubblewrap from .deb
R=tests/adversarial/redteam_s11
# candidates run in name order: the "aa_" copies (the fake-speedup pairs) first, in case a timeout cuts a run
if [ -z "${RT_SKIP_PAIRS:-}" ]; then
cp $R/matmul/mw1_fp16_operands_when_unwatched.py "$OUTDIR/cands/matmul/aa_mw1_fp16_operands_when_unwatched.py"
sed 's/^CHEAT = True/CHEAT = False/' $R/matmul/mw1_fp16_operands_when_unwatched.py > "$OUTDIR/cands/matmul/aa_mw1twin_always_tf32.py"
cp $R/conv/cw1_fp16_operands_when_no_poisoning_mode_is_on.py "$OUTDIR/cands/conv/aa_cw1_fp16_operands_when_no_poisoning_mode_is_on.py"
sed 's/^CHEAT = True/CHEAT = False/' $R/conv/cw1_fp16_operands_when_no_poisoning_mode_is_on.py > "$OUTDIR/cands/conv/aa_cw1twin_always_tf32.py"
fi
cp $R/matmul/mo1_*.py $R/matmul/mh3_*.py "$OUTDIR/cands/matmul/"
cp $R/conv/co1_*.py $R/conv/cp1_*.py $R/conv/ch1_*.py "$OUTDIR/cands/conv/"
cp $R/flip/fo1_*.py $R/flip/fo2_*.py $R/flip/ft1_*.py $R/flip/fh5_*.py "$OUTDIR/cands/flip/"
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.trials=2 exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
X=exploration.sources=[external]
go() { if [ -n "${RT_PARALLEL:-}" ]; then "$@" & else "$@"; fi; }
go run matmul "${RT_MATMUL_S:-55}" task=matmul_bias_gelu 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/matmul]"
go run conv "${RT_CONV_S:-55}" task=conv_relu_maxpool 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/conv]"
go run flip "${RT_FLIP_S:-35}" task=flip2d 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/flip]"
wait
python3 tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/matmul "$OUTDIR"/conv "$OUTDIR"/flip > "$OUTDIR/summary.txt" 2>&1
python3 - "$OUTDIR"/matmul "$OUTDIR"/conv "$OUTDIR"/flip > "$OUTDIR/times.txt" 2>&1 <<'PY'
import glob, sys
import pyarrow.parquet as pq
for d in sys.argv[1:]:
    for f in glob.glob(f"{d}/observations/*.parquet") or glob.glob(f"{d}/observations.parquet"):
        for r in pq.read_table(f).to_pylist():
            print(d.rsplit("/", 1)[-1], r.get("name"), r.get("dtype"), r.get("verdict"), "median_ms", r.get("median_ms"),
                  "verify_s", r.get("verify_s"), "foreign", r.get("foreign_kernels"))
PY
cat "$OUTDIR/rc.txt" "$OUTDIR/summary.txt" "$OUTDIR/times.txt" | cut -c1-400
