#!/usr/bin/env bash
# Issue 10's cost allowance measured on ONE machine (< 590 s): session 8's code (f1a2b2e, the cost before issue 10's
# protocol, whose medians 0.86 s conv / 0.82 s flip set the +30% allowance) and this checkout, run by run, each with
# a cold compile cache of its own, the sandbox on, profile off, one dtype (float32) per task so that both pairs fit
# one device call:
#   git archive -o .s8tree/f1a2b2e.tar f1a2b2e      # here, once (.s8tree/ is git-ignored: carry it)
#   bash bench/h200_s22_cost.sh                     # on the device, after the .whl line; carry .whl, .deb, .s8tree
# Order per task: session 8 then HEAD (same card, same host, minutes apart). The per-candidate median verify_s of
# each run (bench/protocol_cost.py over the run directory) is what issue 10 compares; both trees' run directories go
# to $OUT/cost.tgz (observations only).
set -u
. bench/device_env.sh
. bench/steps.sh  # step; OUT, start, END (END_S, default 585)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/steps.txt" 2>&1
mkdir -p /tmp/s8 && tar xf .s8tree/f1a2b2e.tar -C /tmp/s8 \
  || { echo "no .s8tree/f1a2b2e.tar: make it here with git archive (above) and carry .s8tree" | tee "$OUT/steps.txt"; exit 1; }
HEAD_DIR=$PWD
cost_run() {  # name tree task dtype limit
  local name=$1 tree=$2 task=$3 dt=$4 limit=$5 cache=/tmp/cache-$1
  mkdir -p "$cache"; [ -f /tmp/kcache/ceilings.json ] && cp /tmp/kcache/ceilings.json "$cache/"
  ( cd "$tree" && PYTHONPATH=/tmp/site:$tree KERNELSYNTH_CACHE=$cache TRITON_CACHE_DIR=$cache/triton \
      TORCHINDUCTOR_CACHE_DIR=$cache/inductor TORCH_EXTENSIONS_DIR=$cache/torch_extensions \
      step "$name" "$limit" python3 -m kernelsynth task="$task" hw="$HW" "task.dtypes=[$dt]" \
        exploration.sandbox.mode=on exploration.progress=false exploration.profile=false hydra.run.dir="/tmp/runs/$name" )
  mkdir -p /tmp/kcache; [ -f "$cache/ceilings.json" ] && cp -n "$cache/ceilings.json" /tmp/kcache/
  { echo "== $name ($tree)"; grep -E "records?|trajector" "/tmp/$name.stdout" | cut -c1-200 | head -4
    (cd "$HEAD_DIR" && timeout 40 python3 bench/protocol_cost.py "/tmp/runs/$name" 2>&1 | tail -3); } >> "$OUT/summary.txt"
}
for pair in ${PAIRS:-conv flip}; do  # PAIRS: which task pairs to run, in order
  case $pair in
    conv) cost_run s8-conv /tmp/s8 conv_relu_maxpool float32 ${S8_CONV_S:-130}
          cost_run head-conv "$HEAD_DIR" conv_relu_maxpool float32 ${HEAD_CONV_S:-170} ;;
    flip) cost_run s8-flip /tmp/s8 flip2d float32 ${S8_FLIP_S:-100}
          cost_run head-flip "$HEAD_DIR" flip2d float32 ${HEAD_FLIP_S:-100} ;;
  esac
done
(cd /tmp/runs && tar czf "$OUT/cost.tgz" */observations.parquet */run.json 2>/dev/null)
cp /tmp/*.stdout "$OUT/" 2>/dev/null
cat "$OUT/steps.txt" "$OUT/summary.txt"
