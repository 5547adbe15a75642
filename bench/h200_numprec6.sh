#!/usr/bin/env bash
# H200 check of issue 10 items 2 and 5 after session 6 (precision tail / lower-format statistics,
# joint shapes). Usage, from the repository root (logs under $OUT, default /tmp/out):
#   PARTS="tests ladders redteam" bash bench/h200_numprec6.sh      (also: catalog)
# tests   : GPU adversarial tests with every conv candidate's precision numbers (-s)          (~2 min)
# ladders : conv_relu_maxpool (float32, bfloat16) and flip2d re-run: verdicts must be unchanged
#           (every ladder version accepted), now also on the joint shapes (rule 12); precision
#           columns (bench/precision_report.py) and cost per candidate (bench/protocol_cost.py,
#           compare with VERIFICATION.md "Cost per candidate": at most +30%)             (~3 min)
# redteam : the red team's files of these classes on the GPU: conv p1 p2 p5 (precision), p4
#           (accepted by design), d1 (dtype by size), s1 s2 s3 (joint dims), h1 h3 (honest);
#           flip fd1 fs1 fs2 (reject), fh1 (honest). Look for: every cheat rejected, p4/h*/fh1
#           accepted (summarize.py prints one line each)                                  (~4 min)
# catalog : every catalog task's ladder in-process through the protocol (bench/catalog_smoke.py,
#           float32 then bfloat16, 120 s each): with the joint shapes and the new statistics
#           every trusted version must still be accepted (a rejection naming "tail" or "lower
#           format" is a false rejection to report)                                        (~4 min)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache}
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
if ! command -v bwrap >/dev/null && [ -z "${KERNELSYNTH_BWRAP:-}" ] && ls .deb/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg -x .deb/bubblewrap_*.deb /tmp/pkg && export KERNELSYNTH_BWRAP=/tmp/pkg/usr/bin/bwrap
fi
PARTS=${PARTS:-"tests ladders redteam"}
if [[ " $PARTS " == *" catalog "* ]]; then
  timeout 150 python3 bench/catalog_smoke.py --dtype float32 --budget-s 120 2>&1 | tee "$OUT/catalog_f32.txt" | tail -60
  timeout 150 python3 bench/catalog_smoke.py --dtype bfloat16 --budget-s 120 2>&1 | tee "$OUT/catalog_bf16.txt" | tail -60
fi
if [[ " $PARTS " == *" tests "* ]]; then
  KERNELSYNTH_TEST_GPU=1 timeout 240 python3 -m pytest -q -s -p no:cacheprovider -rA tests/test_adversarial_gpu.py \
    2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^precision |passed|failed|Error" | tail -60
fi
if [[ " $PARTS " == *" ladders "* ]]; then
  timeout 240 python3 -m kernelsynth task=conv_relu_maxpool hw=h200 hydra.run.dir=$OUT/run_conv 2>&1 | tee "$OUT/conv.log" | tail -25
  python3 bench/precision_report.py $OUT/run_conv | tee "$OUT/conv_precision.txt"
  python3 bench/protocol_cost.py $OUT/run_conv | tee "$OUT/conv_cost.txt" | tail -8
  timeout 120 python3 -m kernelsynth task=flip2d hw=h200 hydra.run.dir=$OUT/run_flip2d 2>&1 | tee "$OUT/flip2d.log" | tail -8
  python3 bench/protocol_cost.py $OUT/run_flip2d | tee "$OUT/flip2d_cost.txt" | tail -8
fi
if [[ " $PARTS " == *" redteam "* ]]; then
  RT=tests/adversarial/redteam_2026_12_01; S=$RT/gpu/specs
  mkdir -p $OUT/rt/conv $OUT/rt/flip
  for f in p1_bf16_every8th_channel p2_fp16_output_store p5_bf16_by_content_hash p4_rne9_operands d1_bf16_output_on_big_shapes \
           s1_wrong_when_wide_and_deep s2_wrong_when_image_over_64k_pixels s3_wrong_when_w_over_300 h1_direct_fma h3_split_kahan_packed; do
    cp $RT/conv/$f.py $OUT/rt/conv/; done
  for f in fd1_bitview_dtype_on_big fs1_wrong_when_long_rows_and_many fs2_wrong_past_4097_rows_odd_cols fh1_row_persistent; do
    cp $RT/flip/$f.py $OUT/rt/flip/; done
  K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.sandbox.allow_unsandboxed_external=true exploration.profile=false"
  timeout 240 $K task=conv_relu_maxpool task.spec=$S/conv_relu_maxpool/spec.yaml 'task.dtypes=[float32]' \
    "exploration.extra_candidates=[$OUT/rt/conv]" hydra.run.dir=$OUT/rt_conv > $OUT/rt_conv.log 2>&1
  timeout 120 $K task=flip2d task.spec=$S/flip2d/spec.yaml 'task.dtypes=[float32]' \
    "exploration.extra_candidates=[$OUT/rt/flip]" hydra.run.dir=$OUT/rt_flip > $OUT/rt_flip.log 2>&1
  python3 $RT/summarize.py $OUT/rt_conv $OUT/rt_flip | tee "$OUT/redteam.txt"
  python3 bench/precision_report.py $OUT/rt_conv | tee "$OUT/rt_precision.txt"
fi
