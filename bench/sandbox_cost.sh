#!/usr/bin/env bash
# Cost of the sandbox per candidate on the GPU (issue 13): flip2d and conv_relu_maxpool, each
# run with exploration.sandbox.mode=on and =off; verdicts compared per observation key, and the
# medians of verify_s and wall_s per candidate (SECURITY.md, BENCHMARKS.md).
#   bash bench/sandbox_cost.sh [OUT_DIR [TASK...]]   (default: both tasks; about 9-10 minutes on the H200;
#   under a 10-minute limit run it twice: `... /tmp/sc flip2d`, then `... /tmp/sc2 conv_relu_maxpool`)
# Without bwrap on PATH it unpacks .deb/bubblewrap_*.deb (Debian 12's package) to /tmp/pkg.
# Both modes start from cold compile caches (a fresh TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR
# and kernelsynth cache, the measured ceilings copied in), since a sandboxed worker's caches are
# private to it: the comparison is the sandbox's own cost, not a warm cache against a cold one.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/sandbox_cost}
shift || true
TASKS=${*:-flip2d conv_relu_maxpool}
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -z "${KERNELSYNTH_BWRAP:-}" ] && ! command -v bwrap >/dev/null; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg
  export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
CEIL="${KERNELSYNTH_CACHE:-$HOME/.cache/kernelsynth}/ceilings.json"
for task in $TASKS; do
  for mode in off on; do
    cache="$OUT/cache-$task-$mode"; mkdir -p "$cache"
    [ -f "$CEIL" ] && cp "$CEIL" "$cache/"
    start=$(date +%s.%N)
    KERNELSYNTH_CACHE="$cache" TRITON_CACHE_DIR="$cache/triton" TORCHINDUCTOR_CACHE_DIR="$cache/inductor" \
      TORCH_EXTENSIONS_DIR="$cache/torch_extensions" \
      python3 -m kernelsynth task=$task hw=h200 exploration.sandbox.mode=$mode exploration.progress=false \
        hydra.run.dir="$OUT/$task-$mode" > "$OUT/$task-$mode.log" 2>&1 || { tail -30 "$OUT/$task-$mode.log"; exit 1; }
    echo "$task $mode: $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s end to end; $(grep -m1 'sandbox:' "$OUT/$task-$mode.log" | sed 's/.*sandbox:/sandbox:/')"
    [ -f "$cache/ceilings.json" ] && [ ! -f "$CEIL" ] && mkdir -p "$(dirname "$CEIL")" && cp "$cache/ceilings.json" "$CEIL"
  done
done
python3 bench/sandbox_cost.py "$OUT"
