"""GPU demos (H200): what the CPU path cannot show. python3 tests/adversarial/redteam_s8/gpu_demo.py
fs2: flip2d with int32 offsets on a 16400 x 131072 bfloat16 tensor (just over 2^31 elements, 4.3 GB):
the rows past 2^31 elements are read and written at wrapped offsets (an illegal address or garbage). mm1: the incremental memo's latency under rule 15's rolling
one-element change per call, next to its own full recompute (a fresh module per call)."""
import importlib.util
import math
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def load(rel):
    spec = importlib.util.spec_from_file_location(Path(rel).stem, HERE / rel)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def fs2():
    M, N = 16400, 131072          # 16384 rows of 131072 are 2^31 elements: the last 16 rows lie past int32
    x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    try:
        y = load("flip/fs2_int32_offsets.py").ModelNew()(x)
        torch.cuda.synchronize()
        bad = int((y != x.flip(1)).sum())
        print(f"fs2: {M}x{N} bfloat16 (> 2^31 elements): {bad} wrong elements", flush=True)
    except Exception as e:
        print(f"fs2: {M}x{N} bfloat16: {type(e).__name__}: {str(e)[:200]}", flush=True)


def mm1():
    mod = load("matmul/mm1_incremental_memo_on_row_and_column_checksums.py")
    M = N = K = 4096
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(M, K, device="cuda", generator=g)
    w = (torch.rand(K, N, device="cuda", generator=g) * 2 - 1) / math.sqrt(K)
    b = (torch.rand(N, device="cuda", generator=g) * 2 - 1) / math.sqrt(K)
    m = mod.ModelNew()
    m(x, w, b)

    def timed(fn, reps=20):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for i in range(reps):
            x.view(-1)[(i * 7919) % x.numel()] += 1.0   # rule 15's rolling one-element change
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / reps * 1e3
    memo = timed(lambda: m(x, w, b))
    full = timed(lambda: mod.ModelNew()(x, w, b), reps=5)
    ref = torch.nn.functional.gelu(x @ w + b, approximate="tanh")
    print(f"mm1: 4096^3 float32, one input element changed per call: memo {memo:.3f} ms/call, full recompute "
          f"{full:.3f} ms/call ({full / memo:.1f}x); max error vs torch {float((m(x, w, b) - ref).abs().max()):.2e}",
          flush=True)


if __name__ == "__main__":
    for f in (mm1, fs2):
        try:
            f()
        except Exception as e:
            print(f"{f.__name__}: demo failed: {type(e).__name__}: {e}", flush=True)
