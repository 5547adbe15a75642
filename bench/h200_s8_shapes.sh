#!/usr/bin/env bash
# Session 8 (shape8): rule 12's residues and the audit transport on the H200, < 4 min. From the repo
# root after the device's .whl install line (../shared/device/README.md), carrying .whl and .deb:
#   bash bench/h200_s8_shapes.sh
# 1. bench/audit_transport.py --transport --gpu: seconds per large audited output (flip2d's joint
#    shape in 3 dtypes, softmax's 5017x6091) with whole bytes (256 MiB, session 7) and now
#    (exact outputs above 16 MiB as a checksum computed on the GPU): digest, pipe, parent audit.
# 2. flip2d float32 ladder (the run of BENCHMARKS.md "Session 7", one dtype): median (gap - wall_s)
#    between observations = the parent's time outside the worker per candidate (session 7: about
#    0.6 s), and bench/protocol_cost.py's medians.
# 3. tests/adversarial/redteam_s7's shape cheats on the GPU plan: s1 (conv), fs1 (flip), ss1
#    (softmax) must be rejected, h1, fh1, sh1 accepted (tests/adversarial/redteam_s7/summarize.py).
# Logs, run directories and summary.txt under $OUT (default /tmp/out).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
S="$OUT/summary.txt"; R=tests/adversarial/redteam_s7
COMMON=(hw=h200 exploration.progress=false exploration.profile=false exploration.baselines=false 'task.dtypes=[float32]')
t0=$(date +%s)
timeout -k 5 45 python3 bench/audit_transport.py --transport --gpu > "$OUT/transport.log" 2>&1
echo "== transport: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; cat "$OUT/transport.log" | grep -v USDT >> "$S"
t0=$(date +%s)
timeout -k 5 100 python3 -m kernelsynth task=flip2d "${COMMON[@]}" hydra.run.dir="$OUT/flip" > "$OUT/flip.log" 2>&1
echo "== flip2d float32 ladder: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"
python3 bench/audit_transport.py --run "$OUT/flip" >> "$S" 2>&1
python3 bench/protocol_cost.py "$OUT/flip" 2>&1 | tail -3 >> "$S"
for spec in "flip2d:$R/flip/fs1_wrong_when_cols_4_mod_8_over_300.py,$R/flip/fh1_flat_index_divmod.py" \
            "softmax_rows:$R/softmax/ss1_wrong_when_n_2_mod_4_over_130.py,$R/softmax/sh1_online_two_rows_per_program.py" \
            "conv_relu_maxpool:$R/conv/s1_wrong_when_cout_2_mod_4.py,$R/conv/h1_direct_four_window_accumulators.py"; do
  task=${spec%%:*}; files=${spec#*:}; t0=$(date +%s)
  timeout -k 5 35 python3 -m kernelsynth task=$task "${COMMON[@]}" 'exploration.sources=[external]' \
    "exploration.extra_candidates=[$files]" hydra.run.dir="$OUT/rt-$task" > "$OUT/rt-$task.log" 2>&1
  echo "== $task shape cheats: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"
  python3 $R/summarize.py "$OUT/rt-$task" 2>&1 | cut -c1-400 >> "$S"
done
cat "$S"
