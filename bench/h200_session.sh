#!/usr/bin/env bash
# The H200 runs of the 2026-12-01 session (issues 10-13; BENCHMARKS.md, VERIFICATION.md,
# SECURITY.md), in parts that each fit one 10-minute device call. From the repo root, after the
# device's .whl install line (../shared/device/README.md), carrying .whl and .deb:
#   bash bench/h200_session.sh sweep             # the BLOCK_N sweep and its merged dataset
#   (tests: the GPU tests, with the sandbox on when bwrap is there)
#   bash bench/h200_session.sh tests flip2d        # flip2d with the sandbox off and on (bench/sandbox_cost.sh),
#                                                # both compared with BENCHMARKS.md (bench/compare_benchmarks.py)
#   bash bench/h200_session.sh conv              # the same for conv_relu_maxpool
#   bash bench/h200_session.sh probe             # device nodes, cgroups, uid: what the sandbox can use
#   bash bench/h200_session.sh profile           # bench/verify_profile.py: where verify_s goes (flip2d v1, conv v3)
#   bash bench/h200_session.sh run-flip2d run-conv  # one plain sandboxed run each: verdicts, precision
#                                                # columns (bench/precision_report.py) and protocol cost
# Logs go to $OUT (few files: at most 8 come back from the device).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
S="$OUT/summary.txt"
bwrap_ready() {
  if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
    dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
  fi
}
for part in "$@"; do
  t0=$(date +%s)
  case "$part" in
    tests)
      bwrap_ready
      KERNELSYNTH_TEST_GPU=1 python3 -m pytest -q -p no:cacheprovider -rA tests/test_adversarial_gpu.py tests/test_gpu.py > "$OUT/gpu_tests.log" 2>&1
      echo "== gpu tests: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"
      grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|passed|failed" "$OUT/gpu_tests.log" | tail -40 >> "$S" ;;
    sweep)
      python3 -m kernelsynth -m task=flip2d hw=h200 "task.dtypes=[float32,bfloat16]" \
        task.tunables.BLOCK_N=512,1024,2048 hydra.sweep.dir=/tmp/sweep_blockn > "$OUT/sweep.log" 2>&1
      echo "== sweep: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; tail -45 "$OUT/sweep.log" >> "$S" ;;
    flip2d|conv)
      bwrap_ready
      task=$([ "$part" = conv ] && echo conv_relu_maxpool || echo flip2d)
      bash bench/sandbox_cost.sh /tmp/sc_$part $task > "$OUT/sandbox_$part.txt" 2>&1
      echo "== sandbox cost $task: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; tail -30 "$OUT/sandbox_$part.txt" >> "$S"
      for mode in off on; do
        echo "-- $task sandbox $mode vs BENCHMARKS.md" >> "$S"
        python3 bench/compare_benchmarks.py /tmp/sc_$part/$task-$mode $task >> "$S" 2>&1
        python3 bench/protocol_cost.py /tmp/sc_$part/$task-$mode 2>&1 | tail -3 >> "$S"
      done
      tail -40 /tmp/sc_$part/$task-on.log > "$OUT/${part}_on_tail.log" 2>/dev/null ;;
    probe)
      { id; ls -l /dev/nvidia*; stat -fc '%T' /sys/fs/cgroup; cat /proc/self/cgroup; ls /sys/fs/cgroup | head -30
        cat /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cgroup.subtree_control 2>&1
        mkdir /sys/fs/cgroup/ks-probe 2>&1 && echo "cgroup mkdir ok" && cat /sys/fs/cgroup/ks-probe/pids.max 2>&1
        rmdir /sys/fs/cgroup/ks-probe 2>&1; } > "$OUT/probe.txt" 2>&1
      echo "== probe" >> "$S"; cat "$OUT/probe.txt" >> "$S" ;;
    profile)
      for args in "flip2d v1 float32" "conv_relu_maxpool v3 bfloat16" "conv_relu_maxpool v2 float32"; do
        python3 bench/verify_profile.py $args --gpu 2>&1 | head -45
      done > "$OUT/profile.txt" 2>&1
      echo "== profile: $(( $(date +%s) - t0 )) s" >> "$S"; grep -E "^(flip2d|conv)|verdict=" "$OUT/profile.txt" >> "$S" ;;
    run-flip2d|run-conv)
      bwrap_ready
      task=$([ "$part" = run-conv ] && echo conv_relu_maxpool || echo flip2d)
      python3 -m kernelsynth task=$task hw=h200 exploration.progress=false hydra.run.dir=/tmp/r_$task > "$OUT/$part.log" 2>&1
      echo "== $part: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; grep -m1 "sandbox:" "$OUT/$part.log" >> "$S"
      python3 bench/precision_report.py /tmp/r_$task > "$OUT/${part}_precision.txt" 2>&1
      python3 bench/protocol_cost.py /tmp/r_$task 2>&1 | tail -3 >> "$S"
      python3 bench/compare_benchmarks.py /tmp/r_$task $task 2>&1 | tail -12 >> "$S"
      grep -c accepted "$OUT/${part}_precision.txt" >> "$S" ;;
  esac
done
cat "$S"
