#!/bin/bash
# CPU runs of the red team s15 set (hw=cpu, Triton interpreter, the spec's interpret shapes and dtypes,
# external candidates only, no baselines), one task after the other, each under timeout 400.
# usage (from the repository root): bash tests/adversarial/redteam_s15/run_cpu.sh [task ...]
# Each run writes /tmp/rt15-<task> and its log /tmp/rt15-<task>.log (rc=1 is normal under sources=[external]); then
#   python tests/adversarial/redteam_s7/summarize.py /tmp/rt15-<task> ...
export PYTHONPATH=$PWD TRITON_INTERPRET=1
R=tests/adversarial/redteam_s15
for t in ${@:-matmul_bias_gelu depthwise_conv2d softmax_backward cross_entropy rope}; do
  echo "== $t $(date -u +%H:%M:%S)"
  rm -rf /tmp/rt15-$t
  timeout 400 python -m kernelsynth task=$t hw=cpu exploration.sources=[external] exploration.baselines=false \
      "exploration.extra_candidates=[$R/$t]" hydra.run.dir=/tmp/rt15-$t > /tmp/rt15-$t.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
done
