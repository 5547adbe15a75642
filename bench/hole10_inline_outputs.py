"""Session 10 (hole10) on a GPU: rule 10's "the output lies in memory the call allocated" against a
torch extension. A load_inline CUDA function allocates its output with torch::empty (an aten call
from C++: the poisoning dispatch mode must see it as fresh) and one wraps memory it keeps with
torch::from_blob (no deleter: must fail). Prints one line per case; exit 1 when a verdict is wrong.
usage: python3 bench/hole10_inline_outputs.py   (needs CUDA and nvcc; ~40-60 s cold build)"""
import sys
import time

import torch
from torch.utils.cpp_extension import load_inline

from kernelsynth.verify import VerificationFailure
from kernelsynth.verify.poison import call_poisoned, check_outputs_released, reset_returned

SRC = r"""
#include <torch/extension.h>
__global__ void neg(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = -x[i];
}
torch::Tensor fresh(torch::Tensor x) {
  auto y = torch::empty_like(x);
  long n = x.numel();
  neg<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
static float* kept = nullptr;
torch::Tensor kept_blob(torch::Tensor x) {
  long n = x.numel();
  if (!kept) cudaMalloc(&kept, 1 << 24);
  neg<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), kept, n);
  return torch::from_blob(kept, x.sizes(), x.options());
}
"""
CPP = "torch::Tensor fresh(torch::Tensor x); torch::Tensor kept_blob(torch::Tensor x);"

t0 = time.time()
ext = load_inline("hole10_inline", cpp_sources=CPP, cuda_sources=SRC, functions=["fresh", "kept_blob"], verbose=False)
print(f"build {time.time() - t0:.1f} s")
dev = torch.device("cuda")
bad = 0
for name, fn, should_pass in (("torch::empty output", ext.fresh, True), ("from_blob over kept memory", ext.kept_blob, False)):
    reset_returned()
    x = torch.randn(37, 129, device=dev)
    try:
        out = call_poisoned(fn, [x], dev)
        ok = torch.equal(out, -x)
        del out
        check_outputs_released()
        verdict = "accepted" if ok else "wrong values"
    except VerificationFailure as e:
        verdict = f"rejected: {str(e)[:120]}"
    finally:
        reset_returned()
    right = verdict == "accepted" if should_pass else verdict.startswith("rejected")
    bad += not right
    print(f"{name}: {verdict} ({'as expected' if right else 'WRONG'})")
sys.exit(1 if bad else 0)
