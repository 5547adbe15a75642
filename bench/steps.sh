# Sourced by the bench/h200_*.sh device calls (after bench/device_env.sh): `step NAME LIMIT CMD...`
# runs CMD with a hard limit of LIMIT seconds, cut to what is left of the call's END seconds since
# `start` (both set by the caller), skips it when under 40 s are left, writes its stdout and
# stderr to /tmp/NAME.stdout and a line "NAME: rc=... N s (limit L)" to $OUT/steps.txt.
step() {  # name limit command...
  local name=$1 limit=$2; shift 2
  local left=$(( END - ($(date +%s) - start) ))
  [ "$left" -lt 40 ] && { echo "$name: not run (time)" >> "$OUT/steps.txt"; return; }
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" > "/tmp/$name.stdout" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s (limit $limit)" >> "$OUT/steps.txt"
}
