#!/bin/bash
# CPU runs of the red team s11 set (hw=cpu, Triton interpreter, float32, two trials, external candidates and
# the ladder's v0 only), one after the other.
# usage (from the repository root, which is taken from $PWD): bash tests/adversarial/redteam_s11/run_cpu.sh [flip matmul softmax xent conv]
# Each run writes /tmp/redteam11-<folder> and its log /tmp/redteam11-<folder>.log; then
#   python3 tests/adversarial/redteam_s7/summarize.py /tmp/redteam11-*
R=tests/adversarial/redteam_s11
run() {  # folder task [dtypes]
  echo "== $1 $(date -u +%H:%M:%S)"
  rm -rf /tmp/redteam11-$1
  PYTHONPATH=$PWD nice -n 10 python3 -m kernelsynth task=$2 hw=cpu exploration.baselines=false \
      exploration.sources=[external] "task.dtypes=${3:-[float32]}" exploration.trials=2 \
      "exploration.extra_candidates=[$R/$1]" hydra.run.dir=/tmp/redteam11-$1 > /tmp/redteam11-$1.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
}
for f in ${@:-flip matmul softmax xent conv}; do
  case $f in
    flip) run flip flip2d ;; matmul) run matmul matmul_bias_gelu ;; softmax) run softmax softmax_rows ;; xent) run xent cross_entropy ;;
    conv) run conv conv_relu_maxpool ;;
  esac
done
