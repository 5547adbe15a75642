#!/usr/bin/env bash
# Session 9 (num9): rule 12's GPU shapes against redteam_s8's shape cheats, on the H200 (< 4 min; hard timeouts 240 s):
#   bash bench/h200_num9.sh "$OUT/num9"
# 1. flip2d float32, ladder cut to v0: fs1 (wrong past 16384 columns), fs2 (int32 offsets: wraps past 2^31
#    elements), fh1 (honest); the plan now has a long value per dim (> 65536) and one shape of > 2^31
#    elements (65537 x 32769: 8.6 GB in + out); 90 s.
# 2. softmax_rows float32, ladder v0: ss1 (wrong at N % 256 == 0, N % 1024 != 0), sr1 (exp without its clamp:
#    the new mask probe), redteam_s7 sh1 (honest online softmax); 50 s.
# 3. matmul_bias_gelu float32, ladder v0: ms1 (wrong at K % 64 == 32); 40 s.
# 4. softmax_rows bfloat16, the whole ladder (8 observations) under the new mask probe; 60 s.
# Hard timeouts (sum 240 s), no baselines, exploration.profile=false. Under the given directory: logs,
# observations, summary.txt (verdict and reason per observation) and cost.txt (bench/protocol_cost.py:
# verify_s per candidate; session 8's medians: flip2d 0.94 s, conv 0.69 s).
# Expected: fs1, fs2, ss1, ms1, sr1 rejected (fs2 at shape 65537x32769, fs1 at a shape with N > 65536,
# ss1 at N = 256 mod 1024, ms1 at K = 32 mod 64), v0, fh1 and sh1 accepted, every softmax ladder row accepted.
set -u
OUTDIR=${1:-${OUT:-/tmp}/num9}
mkdir -p "$OUTDIR/cands/flip" "$OUTDIR/cands/softmax" "$OUTDIR/cands/matmul"
. bench/device_env.sh  # PYTHONPATH, the shared compile cache, bubblewrap from .deb
R=tests/adversarial/redteam_s8
cp $R/flip/fs1_wrong_above_16384_cols.py $R/flip/fs2_int32_offsets.py $R/flip/fh1_tl_flip_register_tiles.py "$OUTDIR/cands/flip/"
cp $R/softmax/ss1_wrong_when_n_256_mod_1024.py $R/softmax/sr1_exp_without_range_reduction_clamp.py \
   tests/adversarial/redteam_s7/softmax/sh1_online_two_rows_per_program.py "$OUTDIR/cands/softmax/"
cp $R/matmul/ms1_wrong_when_k_32_mod_64.py "$OUTDIR/cands/matmul/"
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
X=exploration.sources=[external]
run flip 90 task=flip2d 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/flip]"
run softmax 50 task=softmax_rows 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/softmax]"
run matmul 40 task=matmul_bias_gelu 'task.dtypes=[float32]' "$X" "exploration.extra_candidates=[$OUTDIR/cands/matmul]"
# the softmax ladder in bfloat16 with the new mask probe (v2, CUDA online softmax: fixed for masked runs)
run softmax_ladder 60 task=softmax_rows 'task.dtypes=[bfloat16]' exploration.sources=[ladder]
python3 tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/flip "$OUTDIR"/softmax "$OUTDIR"/matmul "$OUTDIR"/softmax_ladder > "$OUTDIR/summary.txt" 2>&1
for d in flip softmax matmul softmax_ladder; do echo "== $d"; python3 bench/protocol_cost.py "$OUTDIR/$d"; done > "$OUTDIR/cost.txt" 2>&1
cat "$OUTDIR/rc.txt" "$OUTDIR/summary.txt" "$OUTDIR/cost.txt" | cut -c1-400
