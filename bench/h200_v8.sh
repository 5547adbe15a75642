#!/usr/bin/env bash
# conv_relu_maxpool v8 (wgmma fed by bulk async copies + mbarriers, warp-specialized; written without a GPU) on the
# H200, one device call of <= 560 s:
#   END_S=550 bash bench/h200_v8.sh        (repo root, after the device's install line, carrying .whl)
# 1. bench/nvrtc_check_v8.py with the device's own NVRTC (13.0 in session 17): the 4 builds and a watchdog-off
#    build compile, 0 spills, no setmaxnreg / wgmma advisory (C7508 / C7512 / C7514 / C7517);
# 2. bench/conv_v8_probe.py (PROBE_BUDGET_S, default 330): verification of the 4 builds on 23 shapes (each dtype
#    in a child process with a deadline: a protocol bug that hangs a launch costs that child, not the call; the
#    kernel's watchdog makes a stuck mbarrier wait give up after 2^26 tries), timing beside eager,
#    torch.compile, v6 and v3 in both dtypes, ncu on the fastest v8 config per dtype;
# 3. compute-sanitizer memcheck of every config on three small ragged shapes per dtype, while time is left.
# To $OUT: steps.txt, nvrtc.txt, conv_v8_probe.txt, conv_v8_probe.json, conv_v8_ncu.txt, sanitize.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-550}
. bench/steps.sh  # step NAME LIMIT CMD...
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/steps.txt" 2>&1
LIB=$(python3 -c "import nvidia, os, glob; m = [f for p in nvidia.__path__ for f in sorted(glob.glob(os.path.join(p, '**', 'libnvrtc.so.13*'), recursive=True))]; print(m[0] if m else '')" 2>/dev/null)
[ -z "$LIB" ] && LIB=$(ls /usr/local/cuda/lib64/libnvrtc.so.13* 2>/dev/null | head -1)
echo "libnvrtc: $LIB" > "$OUT/nvrtc.txt"
step nvrtc 60 python3 bench/nvrtc_check_v8.py "$LIB"
cut -c1-600 /tmp/nvrtc.stdout >> "$OUT/nvrtc.txt"
PROBE_BUDGET_S=${PROBE_BUDGET_S:-330} OUT="$OUT" step v8 350 python3 bench/conv_v8_probe.py
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for dt in bfloat16 float32; do
  if [ -n "$SAN" ]; then
    step san_$dt 60 "$SAN" --tool memcheck --print-limit 20 python3 bench/conv_v8_probe.py --sanitize-child $dt
    { echo "==== $dt"; grep -v "Host Frame" /tmp/san_$dt.stdout | head -60; echo "...."; tail -40 /tmp/san_$dt.stdout; } >> "$OUT/sanitize.txt"
  fi
done
cat "$OUT/steps.txt"; cat "$OUT/nvrtc.txt"; cut -c1-400 /tmp/v8.stdout | tail -150
cut -c1-300 "$OUT/sanitize.txt" 2>/dev/null | tail -30
