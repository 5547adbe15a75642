#!/bin/bash
# CPU runs of the red team s12 set (hw=cpu, Triton interpreter, float32, two trials, external candidates and
# the ladder's v0 only), one after the other.
# usage (from the repository root, which is taken from $PWD): bash tests/adversarial/redteam_s12/run_cpu.sh [flip matmul softmax xent conv]
# Each run writes /tmp/redteam12-<folder> and its log /tmp/redteam12-<folder>.log; then
#   python3 tests/adversarial/redteam_s7/summarize.py /tmp/redteam12-*
R=tests/adversarial/redteam_s12
run() {  # folder task [dtypes]
  echo "== $1 $(date -u +%H:%M:%S)"
  rm -rf /tmp/redteam12-$1
  PYTHONPATH=$PWD timeout 400 nice -n 10 python3 -m kernelsynth task=$2 hw=cpu exploration.baselines=false \
      exploration.sources=[external] "task.dtypes=${3:-[float32]}" exploration.trials=2 \
      "exploration.extra_candidates=[$R/$1]" hydra.run.dir=/tmp/redteam12-$1 > /tmp/redteam12-$1.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
}
for f in ${@:-flip softmax matmul layernorm xent}; do
  case $f in
    flip) run flip flip2d ;; matmul) run matmul matmul_bias_gelu ;; softmax) run softmax softmax_rows ;; xent) run xent cross_entropy ;;
    layernorm) run layernorm layernorm ;;
  esac
done
