#!/bin/bash
# CPU runs of the red team s8 set (hw=cpu, Triton interpreter, seed 0, default settings).
# usage: bash tests/adversarial/redteam_s8/run_cpu.sh [task ...]   (run from the repository root)
# Each run writes /tmp/rt8-<task>; summarize with python3 tests/adversarial/redteam_s7/summarize.py /tmp/rt8-*
R=tests/adversarial/redteam_s8
S7=tests/adversarial/redteam_s7
COMMON="hw=cpu exploration.baselines=false exploration.sources=[external]"
run() {  # name task dtypes folder [extra args]
  local name=$1 task=$2 dtypes=$3 folder=$4; shift 4
  echo "== $name $(date -u +%H:%M:%S)"
  PYTHONPATH=$PWD nice -n 10 python3 -m kernelsynth task=$task $COMMON "task.dtypes=$dtypes" \
      "exploration.extra_candidates=[$folder]" "$@" hydra.run.dir=/tmp/rt8-$name > /tmp/rt8-$name.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
}
for t in "${@:-softmax layernorm rmsnorm matmul xent gelu colsum swiglu flip conv}"; do for t1 in $t; do
  case $t1 in
    flip) run flip flip2d '[float32,int32]' $R/flip ;;
    softmax) run softmax softmax_rows '[float32]' $R/softmax ;;
    layernorm) run layernorm layernorm '[float32]' $R/layernorm ;;
    rmsnorm) run rmsnorm rmsnorm_residual '[bfloat16]' $R/rmsnorm ;;
    matmul) run matmul matmul_bias_gelu '[float32]' $R/matmul ;;
    xent) run xent cross_entropy '[float32]' $R/xent ;;
    gelu) run gelu gelu_tanh '[float32]' $R/gelu ;;
    colsum) run colsum column_sum '[float32]' $R/colsum ;;
    swiglu) run swiglu swiglu "[bfloat16]" $R/swiglu ;;
    conv) run conv conv_relu_maxpool '[float32,bfloat16]' $R/conv task.spec=$S7/specs/conv_relu_maxpool/spec.yaml ;;
  esac
done; done
