#!/usr/bin/env bash
# A first device call after session 21's changes (< 590 s). Run once in session 22, on an H100 (BENCHMARKS.md
# "Session 22"): step 1 ran; steps 2-3 stopped at once (their scripts passed hw=h200; HW from bench/device_env.sh now):
#   bash bench/h200_s22_c1.sh        (repo root, after the device README's install line; carry .whl, .deb)
# 1. conv_relu_maxpool's whole ladder (profile off; 330 s): issue 10's cost (bench/protocol_cost.py, median candidate
#    verify_s; session 21: 1.43 s, allowance 1.12 s) after the integrity guard's changes (more namespaces; the lazily
#    rebound dynamo_deferral._WRAPPER_CODES that sent every check of a GPU worker's first job down the slow path) and
#    its verdicts (session 21: 68/70, the two f32 v3 configs that do not fit shared memory);
# 2. depthwise_conv2d bfloat16 alone (bench/h200_s18_catalog.sh's settings; 120 s): torch.compile's verdict under
#    rule 23's bf16 headroom (session 21: rejected at 1.42x the honest RMS, two roundings);
# 3. red team s15's softmax_backward pair (bench/h200_redteam.sh; 70 s): honest sb_h1 under rule 6's non-finite rule
#    (session 21: rejected, NaN where the reference has -Inf), sb_p1 still rejected.
# To $OUT: steps.txt, summary.txt, conv.tgz, status.txt + catalog_summary.md (step 2), rt15/summary.txt (step 3).
set -u
. bench/device_env.sh
. bench/steps.sh  # step, ladder_step; OUT, start, END (END_S, default 585)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/steps.txt" 2>&1
ladder_step conv conv_relu_maxpool ${CONV_S:-330}
RUNLIST="depthwise_conv2d:bfloat16:120" TOTAL_S=$(( END - ($(date +%s) - start) - 75 )) RUNS=/tmp/s22_runs \
  bash bench/h200_s18_catalog.sh > /tmp/s22_catalog.stdout 2>&1
echo "catalog: $(cat "$OUT/status.txt" 2>/dev/null | tr '\n' ' ')" >> "$OUT/steps.txt"
RT_TASKS=softmax_backward RT_S=70 bash bench/h200_redteam.sh s15 "$OUT/rt15" > /tmp/s22_rt.stdout 2>&1
cat "$OUT/steps.txt"; cut -c1-250 "$OUT/summary.txt" | head -70; cat "$OUT/catalog_summary.md" 2>/dev/null | head -30
cut -c1-300 "$OUT/rt15/summary.txt" 2>/dev/null
