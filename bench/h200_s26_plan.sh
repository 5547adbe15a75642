#!/usr/bin/env bash
# Session 26's device calls (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=580 bash bench/h200_s26_plan.sh
#   PLAN="causal_attention:200:bfloat16:profile matmul_bias_gelu:150:bfloat16" END_S=580 bash bench/h200_s26_plan.sh
# PLAN: "task:seconds:dtype[:profile]" entries, run in order through bench/h200_catalog.sh into one RUNS
# directory (so the last summary, catalog.md, covers every task); an entry is cut to what is left of
# END_S and skipped under 60 s; ":profile" turns the engine's ncu profile step on for that task (its
# budget PROFILE_S, default 90 s, inside the task's seconds); PLAN_EXTRA: more overrides for every entry. $OUT gets catalog.md, status.txt,
# logs.tar.gz, runs.tar.gz, gpu.txt. V8_S=150 on an H200: bench/conv_v8_probe.py first, in V8_S seconds (v8.txt). The default PLAN is the first session-26 call (after its fixes):
# causal_attention float32 (honest TF32 v1/v2 and the SDPA baselines were falsely rejected before),
# depthwise_conv2d bfloat16 (never measured on a GPU), layernorm bfloat16 (not reached in session 25).
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-585}
left() { echo $(( END - ($(date +%s) - start) )); }
export RUNS=/tmp/s26/runs OUT="$FINAL"
. bench/device_env.sh
if [ "$HW" = h200 ] && [ -n "${V8_S:-}" ]; then  # issue 14 on an H200 first: conv v8 alone, with ncu
  mkdir -p /tmp/s26/v8
  OUT=/tmp/s26/v8 PROBE_BUDGET_S=$(( V8_S - 20 )) timeout "$V8_S" python3 bench/conv_v8_probe.py > /tmp/s26/v8.stdout 2>&1
  echo "v8 probe: rc=$? $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
  cp /tmp/s26/v8/conv_v8_probe.txt "$FINAL/v8.txt" 2>/dev/null || tail -60 /tmp/s26/v8.stdout > "$FINAL/v8.txt"
fi
for entry in ${PLAN:-causal_attention:200:float32 depthwise_conv2d:150:bfloat16 layernorm:180:bfloat16}; do
  IFS=: read -r task secs dtype prof <<< "$entry"
  L=$(( $(left) - 25 )); [ "$L" -gt "$secs" ] && L=$secs
  if [ "$L" -lt 60 ]; then echo "$task $dtype: not run ($(left) s left)" >> "$FINAL/status.txt"; continue; fi
  extra="task.dtypes=[$dtype] ${PLAN_EXTRA:-}"; profile=false
  [ "${prof:-}" = profile ] && profile=true && extra="$extra exploration.profile_budget_s=${PROFILE_S:-90}"
  TASKS="$task:$L" TOTAL_S=$(( L + 25 )) EXTRA="$extra" PROFILE=$profile bash bench/h200_catalog.sh \
    > "/tmp/s26_$task.log" 2>&1
done
cp "$FINAL/catalog_summary.md" "$FINAL/catalog.md" 2>/dev/null
echo "total $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
cat "$FINAL/status.txt"; head -60 "$FINAL/catalog.md"
