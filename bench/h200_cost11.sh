#!/usr/bin/env bash
# Session 11, helper cost11: the protocol's cost per candidate on the H200 after cost11's trims
# (references/VERIFICATION.md "Cost per candidate"): jobs.seed_draws instead of torch.manual_seed,
# guard.check_integrity's identity pass, the young-generation collection of check_outputs_released,
# one host sync in compare/_checksum, and rule 12's plan on known specialisation-key tuples
# (conv_relu_maxpool 11 -> 2 new tuples, matmul_bias_gelu 3 -> 0, softmax_rows 1 -> 0).
#   . bench/device_env.sh; timeout -k 5 120 bash bench/h200_cost11.sh "$OUT/cost11"
# 0. (10 s) bench/cost11_pieces.py --gpu: per-call ms of the trimmed pieces on the H200 (compare and
#    _checksum with one host sync; the CPU's before/after are in VERIFICATION.md);
# 1. (20 s) bench/verify_profile.py flip2d v0 float32 --gpu: cProfile of a warm evaluation (session 11
#    before: verify_s 0.82 s; manual_seed 0.10 s, check_integrity 0.106 s, 98 synchronize 0.22 s);
# 2. (40 s) bench/cost11_cpu.py conv_relu_maxpool v3 float32 --gpu, empty TRITON_CACHE_DIR: the warm-up's
#    verify_s and compile_s hold the compiles at the derived shapes' new keys (session 11 before: v3
#    float32 verify_s 5.2-16.8 s in the ladder run; v3 compiles about 24 new variants per config, see VERIFICATION.md);
# 3. (40 s) flip2d float32 v0 through the engine (sandbox on, no baselines, no profile), then
#    bench/protocol_cost.py (before: v0 float32 median verify_s 1.93 s, all float32 candidates 1.56 s,
#    /work/wt/data/s11_flip_cost.txt; allowance 0.82 s x 1.3 = 1.07 s against session 8).
set -u
OUTDIR=${1:-${OUT:-/tmp}/cost11}
mkdir -p "$OUTDIR"
if [ -f bench/device_env.sh ]; then . bench/device_env.sh; fi
t0=$(date +%s)
timeout -k 3 10 python3 bench/cost11_pieces.py --gpu > "$OUTDIR/pieces.txt" 2>&1
echo "pieces: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
t0=$(date +%s)
timeout -k 3 20 python3 bench/verify_profile.py flip2d v0 float32 --gpu > "$OUTDIR/vprof_flip2d_v0.txt" 2>&1
echo "vprof: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
t0=$(date +%s)
TRITON_CACHE_DIR=$(mktemp -d /tmp/cost11-triton-XXXX) timeout -k 3 40 \
  python3 bench/cost11_cpu.py conv_relu_maxpool v3 float32 --gpu --repeats 0 > "$OUTDIR/conv_v3.txt" 2>&1
echo "conv_v3: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
t0=$(date +%s)
timeout -k 3 40 python3 -m kernelsynth hw=h200 task=flip2d 'task.dtypes=[float32]' 'exploration.sources=[external]' \
  exploration.baselines=false exploration.profile=false exploration.progress=false \
  hydra.run.dir="$OUTDIR/flip" > "$OUTDIR/flip.log" 2>&1
echo "flip engine: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
timeout 5 python3 bench/protocol_cost.py "$OUTDIR/flip" > "$OUTDIR/cost.txt" 2>&1
cat "$OUTDIR/rc.txt"
grep -E " ms$" "$OUTDIR/pieces.txt"
grep -E "^verdict|manual_seed|check_integrity|_cuda_synchronize|models_for|__torch_function__|__torch_dispatch__|collect" \
  "$OUTDIR/vprof_flip2d_v0.txt" | cut -c1-150
grep -E "warm-up|repeat|SUMMARY" "$OUTDIR/conv_v3.txt" | cut -c1-200
grep -E "candidate|median" "$OUTDIR/cost.txt" | cut -c1-120 | tail -12
