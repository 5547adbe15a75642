#!/usr/bin/env bash
# Session 17's first H200 call (< 590 s):   bash bench/h200_s17_c1.sh   (repo root, after the install line; carry .whl, .deb)
# 1. bench/nvrtc_check_v7.py with the device's own NVRTC (session 16: 13.0 refused v7's generic lambdas);
# 2. if every v7 build compiled: conv_relu_maxpool's whole ladder (profile off; verdicts, verify_s, the table beside
#    eager and torch.compile); if not: bench/conv_v7_probe.py's diagnosis only;
# 3. flip2d's whole ladder (profile off): verdicts against 136/136.
# To $OUT: steps.txt, nvrtc.txt, summary.txt, conv.tgz, flip.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/steps.txt" 2>&1
LIB=$(python3 -c "import nvidia, os, glob; m = [f for p in nvidia.__path__ for f in sorted(glob.glob(os.path.join(p, '**', 'libnvrtc.so.13*'), recursive=True))]; print(m[0] if m else '')" 2>/dev/null)
[ -z "$LIB" ] && LIB=$(ls /usr/local/cuda/lib64/libnvrtc.so.13* 2>/dev/null | head -1)
echo "libnvrtc: $LIB" > "$OUT/nvrtc.txt"
step nvrtc 90 python3 bench/nvrtc_check_v7.py "$LIB"
cat /tmp/nvrtc.stdout | cut -c1-600 >> "$OUT/nvrtc.txt"
# every build compiled (rc 0 on each line; a 4-byte spill makes the script exit 1 but does not stop the run)
if grep -q " rc 0 " /tmp/nvrtc.stdout 2>/dev/null && ! grep -qE " rc [1-9]" /tmp/nvrtc.stdout; then
  ladder_step conv conv_relu_maxpool ${CONV_S:-300}
else
  PROBE_BUDGET_S=200 OUT="$OUT" step v7 240 python3 bench/conv_v7_probe.py
  cut -c1-400 /tmp/v7.stdout | tail -80 >> "$OUT/summary.txt"
fi
ladder_step flip flip2d ${FLIP_S:-200}
cat "$OUT/steps.txt"; cat "$OUT/nvrtc.txt"; cut -c1-250 "$OUT/summary.txt" | head -80
