#!/usr/bin/env bash
# Red-team GPU screen (one call on the H200). Usage, from the repository root:
#   bash tests/adversarial/redteam_2026_12_01/gpu/run_h200.sh "$OUT/redteam"
# Three engine runs (conv float32, conv bfloat16 honest + p3, flip2d float32) on spec copies that
# keep only v0 (conv) / v1 (flip) of the ladders, no baselines; then one summary line per observation.
set -u
OUTDIR=${1:-/tmp/redteam-gpu}
mkdir -p "$OUTDIR"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
# The sandbox binary from .deb/ when bwrap is not installed (../shared/device/README.md).
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
PARTS=${PARTS:-"conv32 conv16 flip"}
K="python -m kernelsynth hw=h200 exploration.baselines=false exploration.sandbox.allow_unsandboxed_external=true exploration.profile=false"
S=tests/adversarial/redteam_2026_12_01/gpu/specs
[[ " $PARTS " == *" conv32 "* ]] && timeout 360 $K task=conv_relu_maxpool task.spec=$S/conv_relu_maxpool/spec.yaml 'task.dtypes=[float32]' \
  'exploration.extra_candidates=[tests/adversarial/redteam_2026_12_01/gpu/conv]' hydra.run.dir=$OUTDIR/conv32 > $OUTDIR/conv32.log 2>&1
[[ " $PARTS " == *" conv16 "* ]] && timeout 150 $K task=conv_relu_maxpool task.spec=$S/conv_relu_maxpool/spec.yaml 'task.dtypes=[bfloat16]' \
  'exploration.extra_candidates=[tests/adversarial/redteam_2026_12_01/gpu/conv_bf16]' hydra.run.dir=$OUTDIR/conv16 > $OUTDIR/conv16.log 2>&1
[[ " $PARTS " == *" flip "* ]] && timeout 90 $K task=flip2d task.spec=$S/flip2d/spec.yaml 'task.dtypes=[float32]' \
  'exploration.extra_candidates=[tests/adversarial/redteam_2026_12_01/gpu/flip]' hydra.run.dir=$OUTDIR/flip > $OUTDIR/flip.log 2>&1
python tests/adversarial/redteam_2026_12_01/summarize.py $OUTDIR/conv32 $OUTDIR/conv16 $OUTDIR/flip
