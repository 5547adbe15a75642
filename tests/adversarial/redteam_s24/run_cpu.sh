#!/bin/bash
# CPU runs of the red team s24 set (hw=cpu, Triton interpreter, each spec's interpret shapes, external
# candidates only, no baselines, screen on), one run after the other, each under timeout 600.
# usage (from the repository root): bash tests/adversarial/redteam_s24/run_cpu.sh [run ...]
# Each run writes /tmp/rt24-<run> and its log /tmp/rt24-<run>.log (rc=1 is normal under sources=[external]); then
#   python tests/adversarial/redteam_s7/summarize.py /tmp/rt24-<run> ...
export PYTHONPATH=$PWD TRITON_INTERPRET=1
D=tests/adversarial/redteam_s24
declare -A TASK=( [cu]=cumsum_rows [cs]=column_sum [ge]=gelu_tanh [ca]=causal_attention [rn]=rmsnorm_residual )
declare -A DTYPE=( [cu]=float32 [cs]=float32 [ge]=float32 [ca]=float32 [rn]=bfloat16 )
declare -A PATHS=(
  [cu]="$D/cumsum_rows/cu_v1_fp16_scan_on_nonnegative_rows.py,$D/cumsum_rows/cu_s2_memo_keyed_on_sign_and_exponent.py,$D/cumsum_rows/cu_a1_output_over_callers_input_buffer.py,$D/cumsum_rows/cu_h1_honest_triangular_mask_scan.py"
  [cs]="$D/column_sum/cs_f1_forked_child_computes_the_sums.py,$D/column_sum/cs_z1_tiles_with_zero_corner_skipped.py,$D/column_sum/cs_h1_honest_kahan_column_strips.py,$D/column_sum/cs_l1_caller_input_left_column_major.py"
  [ge]="$D/gelu_tanh/ge_b1_bf16_math_on_bf16_valued_inputs.py,$D/gelu_tanh/ge_r1_fewer_bits_on_a_reused_input_tensor.py,$D/gelu_tanh/ge_e1_even_rows_pair_path_drops_last_pair.py"
  [ca]="$D/causal_attention/ca_n1_softmax_without_max_subtraction.py,$D/causal_attention/ca_m1_output_memo_keyed_on_q_and_k.py,$D/causal_attention/ca_h1_honest_two_pass_softmax.py"
  [cu-b]="$D/cumsum_rows/cu_s2_memo_keyed_on_sign_and_exponent.py,$D/cumsum_rows/cu_a1_output_over_callers_input_buffer.py"
  [cu-c]="$D/cumsum_rows/cu_s2_memo_keyed_on_sign_and_exponent.py"
  [cu-d]="$D/cumsum_rows/cu_v1_fp16_scan_on_nonnegative_rows.py"
  [cs-b]="$D/column_sum/cs_l1_caller_input_left_column_major.py"
  [rn]="$D/rmsnorm_residual/rn_k1_weight_frozen_at_first_forward.py,$D/rmsnorm_residual/rn_j1_rstd_of_first_row_group_reused_when_tall_and_wide.py"
)
for run in ${@:-cu cs ge ca rn}; do
  key=${run%%-*}
  echo "== $run ${TASK[$key]} $(date -u +%H:%M:%S)"
  rm -rf /tmp/rt24-$run
  timeout 600 python -m kernelsynth task=${TASK[$key]} hw=cpu exploration.sources=[external] exploration.baselines=false \
      "exploration.extra_candidates=[${PATHS[$run]:-${PATHS[$key]}}]" "task.dtypes=[${DTYPE[$key]}]" \
      hydra.run.dir=/tmp/rt24-$run > /tmp/rt24-$run.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
done
