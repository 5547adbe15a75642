#!/usr/bin/env bash
# Session 11's last H200 call (< 590 s; each step has its own hard limit and starts only while time is left):
#   bash bench/h200_s11_c3.sh            (repo root, after the device's install line)
# 1. issue 10: the session-11 red team's GPU set (bench/h200_redteam11.sh), when present;
# 2. issue 10 / 14: the whole conv_relu_maxpool ladder after the one-dimensional launches of
#    v2/v4/v5 (every version, dtype and config, eager and torch.compile, the ceilings, the ncu
#    profile step), then bench/profile_report.py, protocol_cost.py, tc_summary.py, precision_report.py;
# 3. issue 16: the sandboxed importer on the device (no GPU work), if IMPORT_S is set.
# Also bench/h200_cost11.sh (issue 10: the protocol's cost after helper cost11's trims) before the conv run.
# To $OUT: steps.txt, summary.txt, rt11.tgz, cost11.tgz, conv.tgz, import.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh  # step NAME LIMIT CMD...
if [ -f bench/h200_redteam11.sh ]; then
  step rt11 ${RT11_S:-150} bash bench/h200_redteam11.sh /tmp/rt11
  cp /tmp/rt11.stdout /tmp/rt11/ 2>/dev/null; tar czf "$OUT/rt11.tgz" -C /tmp --exclude='*.so' rt11 2>/dev/null
fi
if [ -f bench/h200_cost11.sh ]; then
  step cost11 ${COST11_S:-125} bash bench/h200_cost11.sh /tmp/cost11
  cp /tmp/cost11.stdout /tmp/cost11/ 2>/dev/null; tar czf "$OUT/cost11.tgz" -C /tmp cost11 2>/dev/null
fi
left=$(( END - ($(date +%s) - start) - ${IMPORT_S:-0} ))
step conv $(( left - 10 )) python3 -m kernelsynth task=conv_relu_maxpool hw=h200 exploration.progress=false \
  exploration.profile_budget_s=${PROFILE_BUDGET:-60} ${CONV_EXTRA:-} hydra.run.dir=/tmp/conv
{ echo "== conv_relu_maxpool"; grep -E "sandbox:|ceiling|profile |lock" /tmp/conv.stdout | cut -c1-700 | head -30
  timeout 40 python3 bench/profile_report.py /tmp/conv 2>&1; timeout 40 python3 bench/protocol_cost.py /tmp/conv 2>&1 | tail -4
  timeout 40 python3 bench/tc_summary.py /tmp/conv conv_relu_maxpool 2>&1 | grep -v "^conv_relu_maxpool  "
  timeout 40 python3 bench/precision_report.py /tmp/conv 2>&1 | cut -c1-240; } >> "$OUT/summary.txt"
cp /tmp/conv.stdout /tmp/conv/cli.log 2>/dev/null
tar czf "$OUT/conv.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' conv 2>/dev/null
if [ "${IMPORT_S:-0}" -gt 0 ]; then
  step import "$IMPORT_S" python3 -m kernelsynth.tools import-kernelbench tests/fixtures/kernelbench bench/kernelbench_extra --out /tmp/kbs
  { cat /tmp/import.stdout | tail -30; python3 -c "import json;r=json.load(open('/tmp/kbs/import_report.json'));print(r.get('sandbox'), sum(p['status']=='imported' for p in r['problems']), 'imported of', len(r['problems']))"; } > "$OUT/import.txt" 2>&1
fi
cat "$OUT/steps.txt"; cat /tmp/rt11/summary.txt 2>/dev/null | cut -c1-250 | head -40; cut -c1-250 "$OUT/summary.txt" | head -100
