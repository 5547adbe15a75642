#!/usr/bin/env bash
# H200 check of issue 10 items 1, 2, 7 (output dtype, precision rule, interpreter bfloat16):
#   bash bench/h200_numprec.sh
# 1. GPU adversarial tests, with every conv candidate's precision numbers printed (-s);
# 2. the conv_relu_maxpool ladder (v0 eager, v1/v2 CUDA, v3 TF32 tl.dot; float32 and bfloat16) and
#    flip2d again: verdicts must be unchanged (all accepted), with the precision columns and the
#    protocol's cost per candidate (compare with VERIFICATION.md "Cost per candidate": <= +30%).
# Logs go to $OUT (or /tmp/out).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache}
KERNELSYNTH_TEST_GPU=1 python3 -m pytest -q -s -p no:cacheprovider -rA tests/test_adversarial_gpu.py tests/test_gpu.py \
  2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^precision |passed|failed|Error" | tail -80
python3 -m kernelsynth task=conv_relu_maxpool hw=h200 hydra.run.dir=/tmp/run_conv 2>&1 | tee "$OUT/conv.log" | tail -25
python3 bench/precision_report.py /tmp/run_conv | tee "$OUT/conv_precision.txt"
python3 bench/protocol_cost.py /tmp/run_conv | tee "$OUT/conv_cost.txt" | tail -8
python3 -m kernelsynth task=flip2d hw=h200 hydra.run.dir=/tmp/run_flip2d 2>&1 | tee "$OUT/flip2d.log" | tail -8
python3 bench/protocol_cost.py /tmp/run_flip2d | tee "$OUT/flip2d_cost.txt" | tail -8
