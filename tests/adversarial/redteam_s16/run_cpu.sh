#!/bin/bash
# CPU runs of the red team s16 set (hw=cpu, Triton interpreter, conv_relu_maxpool's interpret shapes, float32,
# external candidates only, no baselines, screen on), one run after the other, each under timeout 400.
# usage (from the repository root): bash tests/adversarial/redteam_s16/run_cpu.sh [run ...]
# Each run writes /tmp/rt16-<run> and its log /tmp/rt16-<run>.log (rc=1 is normal under sources=[external]); then
#   python tests/adversarial/redteam_s7/summarize.py /tmp/rt16-<run> ...
export PYTHONPATH=$PWD TRITON_INTERPRET=1
D=tests/adversarial/redteam_s16/conv_relu_maxpool
declare -A PATHS=(
  [h1]="$D/h1_honest_autotuned_im2col_dot_four_windows.py"
  [a]="$D/c3_numpy_conv_in_autotuner_do_bench.py,$D/c4_output_memo_across_modules_ignores_bias.py,$D/c5_right_halo_dropped_when_cin_over_64_and_w_over_8.py"
  [b]="$D/c1_output_in_shared_memory_recycled_three_calls_later.py,$D/c2_centre_tap_in_bf16.py,$D/c6_memo_blind_to_the_first_input_row.py"
  [c]="$D/c3b_numpy_conv_in_a_pointer_arguments_methods.py,$D/h3_honest_3xtf32_split_operands_prepacked.py"
  [d]="$D/h2_honest_unfused_fma_map_then_pool_prepacked.py"
  [e]="$D/c1b_output_in_shared_memory_plain_plumbing.py"
  [f]="$D/c7_input_base_aligned_down_to_16_bytes.py"
  [g]="$D/c3c_control_numpy_conv_in_early_config_prune.py"
  [h]="$D/c8_strides_ignored_channels_last_input.py"
)
for run in ${@:-h1 a b c d e f g h}; do
  paths=${PATHS[$run]}
  echo "== $run $(date -u +%H:%M:%S)"
  rm -rf /tmp/rt16-$run
  timeout 400 python -m kernelsynth task=conv_relu_maxpool hw=cpu exploration.sources=[external] exploration.baselines=false \
      "exploration.extra_candidates=[$paths]" hydra.run.dir=/tmp/rt16-$run > /tmp/rt16-$run.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
done
