#!/bin/bash
# CPU runs of the red team s13 set (hw=cpu, Triton interpreter, the spec's interpret dtypes, external
# candidates only, no baselines), one task after the other.
# usage (from the repository root): bash tests/adversarial/redteam_s13/run_cpu.sh [task ...]
# Each run writes /tmp/rt13-<task> and its log /tmp/rt13-<task>.log (rc=1 is normal under sources=[external]); then
#   python tests/adversarial/redteam_s7/summarize.py /tmp/rt13-<task> ...
export PYTHONPATH=$PWD TRITON_INTERPRET=1
R=tests/adversarial/redteam_s13
for t in ${@:-softmax_rows gelu_tanh swiglu layernorm rmsnorm_residual column_sum cumsum_rows column_sum_hostdoor}; do
  echo "== $t $(date -u +%H:%M:%S)"
  task=$t; [ $t = column_sum_hostdoor ] && task=column_sum  # cs_f1 alone: its storage reads are slow under the census
  rm -rf /tmp/rt13-$t
  timeout 400 python -m kernelsynth task=$task hw=cpu exploration.sources=[external] exploration.baselines=false \
      "exploration.extra_candidates=[$R/$t]" hydra.run.dir=/tmp/rt13-$t > /tmp/rt13-$t.log 2>&1
  echo "   rc=$? $(date -u +%H:%M:%S)"
done
