#!/usr/bin/env bash
# Session 12's third H200 call (< 590 s):   bash bench/h200_s12_c3.sh   (repo root, after the install line; carry .whl, .deb)
# issues 10 and 14: conv_relu_maxpool's whole ladder to its end (every version, dtype and config, eager and
# torch.compile, the ceilings, the ncu profile step, the records with their profile columns and the charts),
# after v3's one-variant change and the session's protocol trims; then bench/profile_report.py,
# protocol_cost.py, tc_summary.py, precision_report.py, the charts and the records' profile columns.
# Then, if time is left and the folders exist: red team s12's GPU part (RT12=1) and conv v6's probe (V6=1).
# To $OUT: steps.txt, summary.txt, conv.tgz (run dir without binaries), rt12.tgz, v6.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
step conv ${CONV_S:-500} python3 -m kernelsynth task=conv_relu_maxpool hw=h200 exploration.progress=false \
  exploration.profile_budget_s=${PROFILE_BUDGET:-60} ${CONV_EXTRA:-} hydra.run.dir=/tmp/conv
{ echo "== conv_relu_maxpool"; grep -E "sandbox:|ceiling|profile |lock|records?|trajector" /tmp/conv.stdout | cut -c1-400 | head -30
  timeout 40 python3 bench/profile_report.py /tmp/conv 2>&1; timeout 40 python3 bench/protocol_cost.py /tmp/conv 2>&1 | tail -6
  timeout 40 python3 bench/tc_summary.py /tmp/conv conv_relu_maxpool 2>&1 | grep -v "^conv_relu_maxpool  "
  timeout 40 python3 bench/precision_report.py /tmp/conv 2>&1 | cut -c1-240
  echo "== run dir"; find /tmp/conv -maxdepth 3 -not -name "*.so" -not -name "*.cubin" | head -40
  echo "== charts"; find /tmp/conv -name "*.png" | head
  echo "== records' profile columns"; timeout 40 python3 - <<'PY'
import glob, json
import pyarrow.parquet as pq
for f in glob.glob("/tmp/conv/**/records*.parquet", recursive=True) + glob.glob("/tmp/conv/**/data/*.parquet", recursive=True):
    for r in pq.read_table(f).to_pylist()[:4]:
        print(f, r.get("id"), r.get("dtype"))
        for k, v in r.items():
            if "ncu" in k or k in ("why", "trajectory"):
                print("  ", k, str(v)[:700])
PY
} >> "$OUT/summary.txt" 2>&1
cp /tmp/conv.stdout /tmp/conv/cli.log 2>/dev/null
tar czf "$OUT/conv.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' conv 2>/dev/null
if [ -n "${RT12:-}" ] && [ -f bench/h200_redteam12.sh ]; then
  step rt12 ${RT12_S:-200} bash bench/h200_redteam12.sh /tmp/rt12
  cp /tmp/rt12.stdout /tmp/rt12/ 2>/dev/null; tar czf "$OUT/rt12.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' rt12 2>/dev/null
fi
if [ -n "${V6:-}" ] && [ -f bench/conv_v6_probe.py ]; then
  PROBE_BUDGET_S=${V6_S:-150} step v6 $(( ${V6_S:-150} + 15 )) python3 bench/conv_v6_probe.py
  cp /tmp/v6.stdout "$OUT/v6.txt" 2>/dev/null
fi
cat "$OUT/steps.txt"; cut -c1-250 "$OUT/summary.txt" | head -150; tail -40 "$OUT/v6.txt" 2>/dev/null
