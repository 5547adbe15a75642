#!/bin/bash
# CPU runs of the red team s10 set (hw=cpu, Triton interpreter, float32 -- rmsnorm_residual: bfloat16, its only
# dtype --, two trials, external candidates and the ladder's v0 only), one after the other.
# usage (from the repository root, which is taken from $PWD): bash tests/adversarial/redteam_s10/run_cpu.sh [flip softmax layernorm matmul xent rmsnorm]
# Each run writes /tmp/redteam10-<folder> and its log /tmp/redteam10-<folder>.log; then
#   python3 tests/adversarial/redteam_s7/summarize.py /tmp/redteam10-*
R=tests/adversarial/redteam_s10
run() {  # folder task [dtypes]
  echo "== $1 $(date -u +%H:%M:%S)"
  PYTHONPATH=$PWD nice -n 10 python3 -m kernelsynth task=$2 hw=cpu exploration.baselines=false \
      exploration.sources=[external] "task.dtypes=${3:-[float32]}" exploration.trials=2 \
      "exploration.extra_candidates=[$R/$1]" hydra.run.dir=/tmp/redteam10-$1 > /tmp/redteam10-$1.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
}
for f in ${@:-flip softmax layernorm matmul xent rmsnorm}; do
  case $f in
    flip) run flip flip2d ;; softmax) run softmax softmax_rows ;; layernorm) run layernorm layernorm ;;
    matmul) run matmul matmul_bias_gelu ;; xent) run xent cross_entropy ;; rmsnorm) run rmsnorm rmsnorm_residual '[bfloat16]' ;;
  esac
done
