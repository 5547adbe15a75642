# Sourced by the bench/h200_*.sh device calls (after bench/device_env.sh): `step NAME LIMIT CMD...`
# runs CMD with a hard limit of LIMIT seconds, cut to what is left of the call's END seconds since
# `start` (both set by the caller), skips it when under 40 s are left, writes its stdout and
# stderr to /tmp/NAME.stdout and a line "NAME: rc=... N s (limit L)" to $OUT/steps.txt.
# The call's prologue, for a caller that has not set them itself: OUT (default /tmp/out, made), start
# (now), END (END_S, default 585) and py-spy's folder /tmp/site/bin on PATH.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
start=${start:-$(date +%s)}; END=${END:-${END_S:-585}}
export PATH=/tmp/site/bin:$PATH
step() {  # name limit command...
  local name=$1 limit=$2; shift 2
  local left=$(( END - ($(date +%s) - start) ))
  [ "$left" -lt 40 ] && { echo "$name: not run (time)" >> "$OUT/steps.txt"; return; }
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "/tmp/$name.stdout" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s (limit $limit)" >> "$OUT/steps.txt"
}

# `ladder_step NAME TASK LIMIT`: TASK's whole ladder on hw=$HW (bench/device_env.sh sets it from the lent card's name;
# default h200: hw=h200 stops at once on another GPU) (profile off) as step NAME in /tmp/NAME, then to
# $OUT/summary.txt its record and trajectory lines, bench/protocol_cost.py's cost and bench/tc_summary.py's
# table, and to $OUT/NAME.tgz the run directory (its CLI log as cli.log; no compiled binaries).
ladder_step() {  # name task limit
  local name=$1 task=$2 limit=$3
  step "$name" "$limit" python3 -m kernelsynth task="$task" hw="${HW:-h200}" exploration.progress=false \
    exploration.profile=false hydra.run.dir="/tmp/$name"
  { echo "== $task"; grep -E "records?|trajector" "/tmp/$name.stdout" | cut -c1-300 | head -10
    timeout 40 python3 bench/protocol_cost.py "/tmp/$name" 2>&1 | tail -8
    timeout 40 python3 bench/tc_summary.py "/tmp/$name" "$task" 2>&1 | grep -v "^$task  "
  } >> "$OUT/summary.txt" 2>&1
  cp "/tmp/$name.stdout" "/tmp/$name/cli.log" 2>/dev/null
  tar czf "$OUT/$name.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' "$name" 2>/dev/null
}
