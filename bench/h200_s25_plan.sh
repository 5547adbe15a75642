#!/usr/bin/env bash
# The open device measurements after session 25 (which got an H100 four times and no H200), in ONE call:
#   END_S=585 bash bench/h200_s25_plan.sh    (repo root, after the .whl line; carry .whl, .deb)
# bench/h200_s24_plan.sh with part 1 on what session 25 changed without a GPU, float32, 180 s per task:
# causal_attention (the new range-check probe {scale: [6, 8], atol x2000, rtol x4} must not reject the ladder's honest TF32 v1/v2: a false
# rejection would show here) and cumsum_rows (its new determinism bound: torch.compile's ratio); then, on an
# H200 only, conv v8 with ncu (issue 14's >= 1.1x torch.compile there).
PLAN_TASKS="causal_attention:180 cumsum_rows:180" PLAN_EXTRA='task.dtypes=[float32]' exec bash bench/h200_s24_plan.sh
