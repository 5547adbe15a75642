#!/bin/bash
# Every candidate of redteam_s16b through run_eval.py (in-process harness, CPU plan cut to listed shapes),
# one process at a time; output appended to cpu_summary.txt. Run from the repository root.
export PYTHONPATH=$PWD TRITON_INTERPRET=1
D=tests/adversarial/redteam_s16b
S16=tests/adversarial/redteam_s16/conv_relu_maxpool
rm -f $D/cpu_summary.txt
run() { timeout 900 python $D/run_eval.py "$@" 2>&1 | grep -v USDT; }
# library doors (+ s16's c3/c3b as controls: labelled since c3678ec)
run --shapes 2 --trials 2 $D/d1_*.py $D/d2_*.py $D/d3_*.py $D/d4_*.py $D/d5_*.py $D/d6_*.py $D/d7_*.py $D/d8_*.py $D/d9_*.py \
    $S16/c3_numpy_conv_in_autotuner_do_bench.py $S16/c3b_numpy_conv_in_a_pointer_arguments_methods.py
# memory, staleness, shapes, honest
run --shapes 2 --trials 2 $D/m1_*.py $D/m2_*.py $D/s1_*.py $D/s4_*.py $D/p1_*.py $D/p2_*.py $D/h4_*.py $D/h5_*.py
# parameter memos (rule 21's trials 1 and 3 need trials >= 4)
run --shapes 2 --trials 4 $D/s2_*.py $D/s3_*.py $D/m1_*.py $D/m2_*.py $D/h4_*.py
# m1 with a single trial: its trial-0 output is the retained one (the settle recheck sees it zeroed)
run --shapes 1 --trials 1 $D/m1_*.py
