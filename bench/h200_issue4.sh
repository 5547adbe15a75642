#!/usr/bin/env bash
# The H200 session for issue 4 (references/VERIFICATION.md): GPU adversarial tests, then the
# protocol's cost per candidate on a full run, and (issue 12) the run's best latencies and verdicts
# against BENCHMARKS.md (bench/compare_benchmarks.py, 2% tolerance). Usage (from the repo root, after the .whl prefix):
#   bash bench/h200_issue4.sh tests|flip2d|conv
# Logs go to $OUT (or /tmp/out).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache}
case "$1" in
  tests)
    KERNELSYNTH_TEST_GPU=1 python3 -m pytest -q -p no:cacheprovider -rA tests/test_adversarial_gpu.py tests/test_gpu.py \
      2>&1 | tee "$OUT/gpu_tests.log" | tail -40 ;;
  flip2d)
    python3 -m kernelsynth task=flip2d hw=h200 hydra.run.dir=/tmp/run_flip2d 2>&1 | tee "$OUT/flip2d.log" | tail -45
    python3 bench/protocol_cost.py /tmp/run_flip2d | tee "$OUT/flip2d_cost.txt" | tail -8
    python3 bench/compare_benchmarks.py /tmp/run_flip2d flip2d | tee "$OUT/flip2d_compare.txt" ;;
  conv)
    python3 -m kernelsynth task=conv_relu_maxpool hw=h200 \
      "exploration.extra_candidates=[$PWD/examples/load_inline_conv_relu_maxpool.py]" hydra.run.dir=/tmp/run_conv \
      2>&1 | tee "$OUT/conv.log" | tail -45
    python3 bench/protocol_cost.py /tmp/run_conv | tee "$OUT/conv_cost.txt" | tail -8
    python3 bench/compare_benchmarks.py /tmp/run_conv conv_relu_maxpool | tee "$OUT/conv_compare.txt" ;;
esac
