#!/usr/bin/env bash
# Session 8, issue 10 (input-range probes, accumulation slack, tolerance-scale staleness) on the H200,
# one device call, < 4 min (hard timeouts sum to 225 s), from the repo root after the .whl line,
# carrying .whl and .deb:
#   bash bench/h200_prec8.sh            # logs, run dirs and summary.txt under $OUT/prec8
# 1. conv_relu_maxpool float32 ladder (no baselines, profile off): verdicts unchanged, and
#    bench/protocol_cost.py's median verify_s against BENCHMARKS.md "Session 7" (0.69 s sandbox on).
# 2. tests/adversarial/redteam_s7 on the GPU with the probes: conv h1 (honest), p1, p2 (float16
#    operands/intermediate: expected rejected by the 2^17 probe), m1 (memo on a bf16-rounded key:
#    expected accepted, its stale answers stay inside the tolerance); softmax, layernorm, matmul
#    ladders with their red-team files (sh1, lh1 honest; sr1, lr1 by the shift probe, lp1 by the
#    accumulation slack, mp1 by the scale probe).
set -u
OUTDIR=${OUT:-/tmp/out}/prec8
mkdir -p "$OUTDIR"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PYTHONUNBUFFERED=1
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
R=tests/adversarial/redteam_s7
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.progress=false"
run() {  # name seconds args...
  local name=$1 secs=$2 t0; shift 2; t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? in $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
run conv_ladder 95 task=conv_relu_maxpool 'task.dtypes=[float32]'
run conv_rt 50 task=conv_relu_maxpool task.spec=$R/specs/conv_relu_maxpool/spec.yaml 'task.dtypes=[float32]' \
  exploration.sources=[external] exploration.sandbox.allow_unsandboxed_external=true \
  "exploration.extra_candidates=[$R/conv/h1_direct_four_window_accumulators.py,$R/conv/p1_fp16_operands_under_tf32.py,$R/conv/p2_fp16_intermediate_dithered.py,$R/conv/m1_memo_on_bf16_rounded_input.py]"
run softmax 30 task=softmax_rows 'task.dtypes=[float32]' exploration.sandbox.allow_unsandboxed_external=true \
  "exploration.extra_candidates=[$R/softmax/sh1_online_two_rows_per_program.py,$R/softmax/sr1_no_max_subtraction.py]"
run layernorm 25 task=layernorm 'task.dtypes=[float32]' exploration.sandbox.allow_unsandboxed_external=true \
  "exploration.extra_candidates=[$R/layernorm/lh1_chan_combined_chunks.py,$R/layernorm/lr1_one_pass_raw_moments.py,$R/layernorm/lp1_fast_inverse_sqrt_two_newton.py]"
run matmul 25 task=matmul_bias_gelu 'task.dtypes=[float32]' exploration.sandbox.allow_unsandboxed_external=true \
  "exploration.extra_candidates=[$R/matmul/mp1_fp16_operands_under_tf32.py]"
{
  cat "$OUTDIR/rc.txt"
  python3 $R/summarize.py "$OUTDIR"/conv_ladder "$OUTDIR"/conv_rt "$OUTDIR"/softmax "$OUTDIR"/layernorm "$OUTDIR"/matmul
  python3 bench/protocol_cost.py "$OUTDIR"/conv_ladder | tail -3
  python3 bench/protocol_cost.py "$OUTDIR"/softmax "$OUTDIR"/layernorm "$OUTDIR"/matmul | tail -6
} > "$OUTDIR/summary.txt" 2>&1
cat "$OUTDIR/summary.txt"
