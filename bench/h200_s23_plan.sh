#!/usr/bin/env bash
# The open device measurements in priority order, in ONE call that does what its budget allows (written in
# session 23, when no device machine started all session; run it as the first call of the next session):
#   END_S=585 bash bench/h200_s23_plan.sh   (repo root, after the .whl line; carry .whl, .deb, .s8tree)
# .s8tree/f1a2b2e.tar must exist here first: `mkdir -p .s8tree && git archive -o .s8tree/f1a2b2e.tar f1a2b2e`.
# Parts, each skipped (and named in plan.txt) when too little of the call's END_S seconds is left:
#   1. issue 10's protocol cost on one machine (bench/h200_s22_cost.sh): session 8's tree then HEAD, float32,
#      conv_relu_maxpool (~300 s), then flip2d (~200 s) -- PAIRS="conv" for conv only;
#   2. depthwise_conv2d bfloat16 (bench/h200_s18_catalog.sh's settings): torch.compile's verdict under rule 23's
#      bf16 headroom (session 21: falsely rejected, 1.42x the honest RMS);
#   3. red team s15's softmax_backward pair (bench/h200_redteam.sh): honest sb_h1 under rule 6 (session 21: falsely
#      rejected, NaN where the reference has -Inf), sb_p1.
# Each part writes under /tmp/plan/<part>; $OUT gets plan.txt (what ran, rc, seconds), the parts' summaries
# (cost.txt, v8.txt, catalog.md, rt15.txt) and all.tgz (every part's folder: run directories' observations, logs) --
# 6 files, within the device's 8.
set -u
. bench/device_env.sh
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL" /tmp/plan
export start=$(date +%s) END=${END_S:-585}
left() { echo $(( END - ($(date +%s) - start) )); }
note() { echo "$*" | tee -a "$FINAL/plan.txt"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader > "$FINAL/plan.txt" 2>&1
note "HW=$HW END_S=$END"

# 1. cost: the script's own per-run limits, cut to what is left of this call (it shares start/END)
if [ "$(left)" -gt 200 ]; then
  t0=$(date +%s)
  OUT=/tmp/plan/cost PAIRS=${PAIRS:-conv flip} bash bench/h200_s22_cost.sh > /tmp/plan/cost.stdout 2>&1
  note "1 cost: rc=$? $(( $(date +%s) - t0 )) s"
  cat /tmp/plan/cost/steps.txt /tmp/plan/cost/summary.txt > "$FINAL/cost.txt" 2>/dev/null
else note "1 cost: not run ($(left) s left)"; fi

# 1b (session 24). conv v8 alone with its AHEAD configs (bench/conv_v8_probe.py: 8 builds verified on 23 shapes,
# timed beside eager, torch.compile, v6, v3; ncu on the fastest per dtype) in what is left, when > 110 s
if [ "$(left)" -gt 110 ] && [ -z "${SKIP_V8:-}" ]; then
  t0=$(date +%s); mkdir -p /tmp/plan/v8
  OUT=/tmp/plan/v8 PROBE_BUDGET_S=$(( $(left) - 30 )) timeout $(( $(left) - 10 )) python3 bench/conv_v8_probe.py \
    > /tmp/plan/v8.stdout 2>&1
  note "1b v8 probe: rc=$? $(( $(date +%s) - t0 )) s"
  cp /tmp/plan/v8/conv_v8_probe.txt "$FINAL/v8.txt" 2>/dev/null || tail -60 /tmp/plan/v8.stdout > "$FINAL/v8.txt"
else note "1b v8 probe: not run ($(left) s left)"; fi

# 2. depthwise bfloat16 (its run needs ~120 s; keep ~75 s for part 3)
L=$(( $(left) - 75 ))
if [ "$L" -gt 60 ]; then
  t0=$(date +%s)
  OUT=/tmp/plan/catalog RUNLIST="depthwise_conv2d:bfloat16:120" TOTAL_S=$L RUNS=/tmp/plan/catalog/runs \
    bash bench/h200_s18_catalog.sh > /tmp/plan/catalog.stdout 2>&1
  note "2 depthwise bf16: rc=$? $(( $(date +%s) - t0 )) s; $(tr '\n' ' ' < /tmp/plan/catalog/status.txt 2>/dev/null)"
  cp /tmp/plan/catalog/catalog_summary.md "$FINAL/catalog.md" 2>/dev/null
else note "2 depthwise bf16: not run ($(left) s left)"; fi

# 3. red team s15 softmax_backward (two external candidates, ~70 s)
if [ "$(left)" -gt 60 ]; then
  t0=$(date +%s)
  OUT=/tmp/plan/rt15 RT_TASKS=softmax_backward RT_S=70 bash bench/h200_redteam.sh s15 /tmp/plan/rt15 \
    > /tmp/plan/rt15.stdout 2>&1
  note "3 rt15 softmax_backward: rc=$? $(( $(date +%s) - t0 )) s"
  cp /tmp/plan/rt15/summary.txt "$FINAL/rt15.txt" 2>/dev/null
else note "3 rt15: not run ($(left) s left)"; fi

tar czf "$FINAL/all.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' --exclude='triton' --exclude='inductor' plan \
  2>/dev/null
note "total $(( $(date +%s) - start )) s"
cat "$FINAL/cost.txt" 2>/dev/null | cut -c1-250; head -40 "$FINAL/catalog.md" 2>/dev/null; cut -c1-300 "$FINAL/rt15.txt" 2>/dev/null; tail -40 "$FINAL/v8.txt" 2>/dev/null | cut -c1-300
