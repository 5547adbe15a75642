#!/usr/bin/env bash
# Red team s7 on the H200 (one call, < 5 min): bash tests/adversarial/redteam_s7/run_h200.sh "$OUT/rt7"
# Six engine runs with hard timeouts (sum 285 s), ladders cut to v0 (exploration.sources=[external]),
# no baselines; each run's log and observations go under $OUTDIR; a summary line per observation at the end
# ($OUTDIR/summary.txt). CPU-only candidates (f1, ff1: numpy on host memory) are left out.
set -u
OUTDIR=${1:-${OUT:-/tmp}/rt7}
mkdir -p "$OUTDIR"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
R=tests/adversarial/redteam_s7
K="python -m kernelsynth hw=h200 exploration.baselines=false exploration.sources=[external] exploration.profile=false exploration.sandbox.allow_unsandboxed_external=true"
SPEC=task.spec=$R/specs/conv_relu_maxpool/spec.yaml
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$?" >> "$OUTDIR/rc.txt"
}
# 1. conv float32: honest h1; p1 (fp16 operands: rule 23 at C_in = 64), p2 (dithered fp16), s1 (C_out = 2 mod 4
#    on the GPU plan), m1 (memo on rounded input: timing), k1 (stale bias).
run conv32 120 task=conv_relu_maxpool $SPEC 'task.dtypes=[float32]' \
  "exploration.extra_candidates=[$R/conv/h1_direct_four_window_accumulators.py,$R/conv/p1_fp16_operands_under_tf32.py,$R/conv/p2_fp16_intermediate_dithered.py,$R/conv/s1_wrong_when_cout_2_mod_4.py,$R/conv/m1_memo_on_bf16_rounded_input.py,$R/conv/k1_prepared_params_keyed_on_weight_only.py]"
# 2. conv bfloat16: honest h1 and p3 (split-K partials in bf16) at C_in = 64.
run conv16 45 task=conv_relu_maxpool $SPEC 'task.dtypes=[bfloat16]' \
  "exploration.extra_candidates=[$R/conv/h1_direct_four_window_accumulators.py,$R/conv_bf16/p3_bf16_split_k2_partials.py]"
# 3. flip2d float32: honest fh1, fs1 (N = 4 mod 8 > 300), fm1 (tail-blind memo), fd1 (neg-bit view).
run flip 40 task=flip2d 'task.dtypes=[float32]' \
  "exploration.extra_candidates=[$R/flip/fh1_flat_index_divmod.py,$R/flip/fs1_wrong_when_cols_4_mod_8_over_300.py,$R/flip/fm1_memo_blind_to_input_tail.py,$R/flip/fd1_neg_bit_view_output.py]"
# 4. softmax_rows float32: honest sh1 (own exp), sr1 (no max subtraction), ss1 (N = 2 mod 4 > 130).
run softmax 30 task=softmax_rows 'task.dtypes=[float32]' "exploration.extra_candidates=[$R/softmax]"
# 5. matmul_bias_gelu float32: mp1 (fp16 operands under tf32) at 4096^3 and 1000x1030x4096.
run matmul 25 task=matmul_bias_gelu 'task.dtypes=[float32]' "exploration.extra_candidates=[$R/matmul]"
# 6. layernorm float32: honest lh1, lr1 (raw moments), lk1 (stale bias).
run layernorm 25 task=layernorm 'task.dtypes=[float32]' "exploration.extra_candidates=[$R/layernorm]"
python $R/summarize.py "$OUTDIR"/conv32 "$OUTDIR"/conv16 "$OUTDIR"/flip "$OUTDIR"/softmax "$OUTDIR"/matmul "$OUTDIR"/layernorm \
  > "$OUTDIR/summary.txt" 2>&1
cat "$OUTDIR/rc.txt" "$OUTDIR/summary.txt"
