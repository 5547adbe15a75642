#!/usr/bin/env bash
# Session 12's last H200 call (< END_S s):   bash bench/h200_s12_c4.sh   (repo root, after the install line; carry .whl, .deb)
# 1. issue 10: red team s12's GPU part (bench/h200_redteam12.sh, when present);
# 2. issue 14: conv v6's probe (bench/conv_v6_probe.py, when present: NVRTC builds, ragged-shape checks, timings
#    beside eager, torch.compile, v3 and v5);
# 3. issue 15: layernorm float32 after its atol change (no baselines; its ladder failed the 74711 x 2 shape in call 2).
# To $OUT: steps.txt, rt12.tgz, rt12_summary.txt, v6.txt, layernorm.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-560}
. bench/steps.sh
if [ -f bench/h200_redteam12.sh ]; then
  step rt12 ${RT12_S:-200} bash bench/h200_redteam12.sh /tmp/rt12
  cp /tmp/rt12.stdout /tmp/rt12/ 2>/dev/null; cp /tmp/rt12/summary.txt "$OUT/rt12_summary.txt" 2>/dev/null
  tar czf "$OUT/rt12.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' --exclude='kcache' rt12 2>/dev/null
fi
if [ -f bench/conv_v6_probe.py ]; then
  PROBE_BUDGET_S=${V6_S:-150} step v6 $(( ${V6_S:-150} + 15 )) python3 bench/conv_v6_probe.py
  cp /tmp/v6.stdout "$OUT/v6.txt" 2>/dev/null
fi
step layernorm ${LN_S:-110} python3 -m kernelsynth task=layernorm hw=h200 'task.dtypes=[float32]' exploration.baselines=false \
  exploration.profile=false exploration.progress=false exploration.trials=1 hydra.run.dir=/tmp/ln
grep -E "accepted|rejected|trajector" /tmp/layernorm.stdout | cut -c1-400 > "$OUT/layernorm.txt" 2>&1
cat "$OUT/steps.txt"; cut -c1-300 "$OUT/rt12_summary.txt" 2>/dev/null | head -60; tail -60 "$OUT/v6.txt" 2>/dev/null | cut -c1-250; cat "$OUT/layernorm.txt"
