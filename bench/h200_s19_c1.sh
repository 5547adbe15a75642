#!/usr/bin/env bash
# Session 19's first H200 call (< 590 s):   bash bench/h200_s19_c1.sh   (repo root, after the install line; carry .whl, .deb)
# 1. conv_relu_maxpool's whole ladder (profile off; v8 joins it: issue 14's first engine run of the warp-specialized
#    wgmma kernel) -> verdicts, the table beside eager and torch.compile, and issue 10's cost (bench/protocol_cost.py:
#    median candidate verify_s against session 17's 1.35 s and session 8's 0.86 s);
# 2. flip2d's whole ladder (profile off): verdicts (136/136 before) and its verify_s (session 17: 1.43 s; session 8: 0.82 s);
# 3. while time is left: where a WARM conv_relu_maxpool v4 bfloat16 evaluation's time goes (py-spy after the warm-up;
#    session 16's profile predates sessions 17-19's trims) -> spy.txt.
# To $OUT: steps.txt, summary.txt, conv.tgz, flip.tgz, spy.txt. The second call: END_S=560 bash bench/h200_v8.sh.
set -u
. bench/device_env.sh
. bench/steps.sh  # step, ladder_step; OUT, start, END (END_S, default 585)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/steps.txt" 2>&1
ladder_step conv conv_relu_maxpool ${CONV_S:-330}
ladder_step flip flip2d ${FLIP_S:-170}
step spy_conv 80 python3 bench/cost11_cpu.py conv_relu_maxpool v4 bfloat16 --gpu --repeats 3 --spy /tmp/spy_conv.raw
{ grep -E "warm-up|repeat|SUMMARY|derived" /tmp/spy_conv.stdout | cut -c1-220
  python3 bench/pyspy_fold.py /tmp/spy_conv.raw --top 70; } > "$OUT/spy.txt" 2>&1
cat "$OUT/steps.txt"; cut -c1-250 "$OUT/summary.txt" | head -80; head -50 "$OUT/spy.txt" | cut -c1-200
