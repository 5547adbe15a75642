#!/usr/bin/env bash
# Red team s8 on the H200 (one call, < 3 min): bash tests/adversarial/redteam_s8/run_h200.sh "$OUT/rt8"
# 1. gpu_demo.py (fs2 at 2^31 elements; mm1's memo latency vs its full recompute), 40 s;
# 2. matmul_bias_gelu float32, ladder cut to v0 (eager: cuBLAS TF32, mm1's median_ms sits next to it): mm1 (memo),
#    mc1 (first-call fp16 scaling), ms1 (K = 32 mod 64), 60 s;
# 3. flip2d float32, ladder cut to v0: fd1, fo1, fs1 (N > 16384), fs2 (int32 offsets), fh1 (honest), 40 s.
# Hard timeouts (sum 140 s), no baselines, exploration.profile=false; logs, observations and summary.txt
# under the given directory. CPU-only candidates (conv/cf1, xent/cf1: numpy on host memory) are left out.
set -u
OUTDIR=${1:-${OUT:-/tmp}/rt8}
mkdir -p "$OUTDIR"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
if [ -f bench/device_env.sh ]; then . bench/device_env.sh; fi
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
R=tests/adversarial/redteam_s8
K="python -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$?" >> "$OUTDIR/rc.txt"
}
timeout -k 5 40 python $R/gpu_demo.py > "$OUTDIR/gpu_demo.txt" 2>&1; echo "gpu_demo: rc=$?" >> "$OUTDIR/rc.txt"
run matmul 60 task=matmul_bias_gelu 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$R/matmul]"
run flip 40 task=flip2d 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$R/flip]"
python tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/matmul "$OUTDIR"/flip > "$OUTDIR/summary.txt" 2>&1
cat "$OUTDIR/rc.txt" "$OUTDIR/gpu_demo.txt" "$OUTDIR/summary.txt"
