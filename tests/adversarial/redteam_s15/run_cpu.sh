#!/bin/bash
# CPU runs of the red team s15 set (hw=cpu, Triton interpreter, the spec's interpret shapes and dtypes,
# external candidates only, no baselines), one run after the other, each under timeout 400.
# usage (from the repository root): bash tests/adversarial/redteam_s15/run_cpu.sh [run ...]
# A run is a task name (all of its folder) or one of the split runs below (depthwise_conv2d's five
# candidates in both dtypes do not fit one 400 s run on the shared 2-core machine).
# Each run writes /tmp/rt15-<run> and its log /tmp/rt15-<run>.log (rc=1 is normal under sources=[external]); then
#   python tests/adversarial/redteam_s7/summarize.py /tmp/rt15-<run> ...
export PYTHONPATH=$PWD TRITON_INTERPRET=1
R=tests/adversarial/redteam_s15
D=$R/depthwise_conv2d
declare -A TASK=([dw_a]=depthwise_conv2d [dw_b]=depthwise_conv2d [dw_c]=depthwise_conv2d [mb_p3]=matmul_bias_gelu [mb_h2]=matmul_bias_gelu
                 [sb_s2]=softmax_backward [sb_s3]=softmax_backward [ce_p2]=cross_entropy)
declare -A PATHS=([dw_a]="$D/dw_d1_nhwc_output_with_shadowed_is_contiguous.py,$D/dw_k1_global_cache_weight_hash_bias_ends.py"
                  [dw_b]="$D/dw_p1_bf16_parameters.py,$D/dw_h1_honest_sliding_row_window.py"
                  [dw_c]="$D/dw_r1_halo_dropped_on_2d_tiles.py"
                  [mb_p3]="$R/matmul_bias_gelu/mb_p3_8bit_and_9bit_operands.py"
                  [mb_h2]="$R/matmul_bias_gelu/mb_h2_honest_hardware_tf32_truncation.py"
                  [sb_s2]="$R/softmax_backward/sb_s2_memo_on_exponents_mixed_position_hash.py"
                  [sb_s3]="$R/softmax_backward/sb_s3_memo_on_scale_invariant_exponents.py"
                  [ce_p2]="$R/cross_entropy/ce_p2_quartic_exp2.py")
for run in ${@:-matmul_bias_gelu dw_a dw_b dw_c softmax_backward cross_entropy rope}; do
  task=${TASK[$run]:-$run}; paths=${PATHS[$run]:-$R/$run}
  echo "== $run ($task) $(date -u +%H:%M:%S)"
  rm -rf /tmp/rt15-$run
  timeout 400 python -m kernelsynth task=$task hw=cpu exploration.sources=[external] exploration.baselines=false \
      "exploration.extra_candidates=[$paths]" hydra.run.dir=/tmp/rt15-$run > /tmp/rt15-$run.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
done
