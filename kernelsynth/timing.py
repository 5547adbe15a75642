"""Latency measurement (references/EXPLORATION.md, "Timing"). Runs in a worker.

``triton.testing.do_bench`` does the work: CUDA events on the current stream, the L2 cache
cleared before every repetition (it zeroes a 256 MB buffer), warm-up and repetition given in ms.
We ask it for the 20th, 50th and 80th percentiles and time each version ``repeats`` times; the
relative spread of the medians is recorded so selection can reject unstable timings.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Dict

import torch


def time_ms(fn: Callable[[], object], warmup_ms: float, rep_ms: float, repeats: int = 2) -> Dict[str, float]:
    """Latency of ``fn()`` in ms.

    Returns ``median_ms`` (median of the repeats' medians), ``p20_ms`` and ``p80_ms`` (of the
    first repeat), ``medians_ms`` and ``spread``: (max - min) / min over the medians of ``repeats``
    independent do_bench calls. ``synced_ms``: median of 5 calls timed on the host with a full
    device synchronisation, which includes work the candidate left on other streams (events on
    the current stream do not see it).
    """
    from triton.testing import do_bench

    medians, first = [], None
    for _ in range(max(1, repeats)):
        p20, p50, p80 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.2, 0.5, 0.8])
        medians.append(p50)
        first = first or (p20, p50, p80)
    torch.cuda.synchronize()
    synced = []
    for _ in range(5):  # host clock around call + full device sync: sees work on every stream
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        synced.append((time.perf_counter() - start) * 1e3)
    return {"p20_ms": float(first[0]), "median_ms": float(statistics.median(medians)),
            "synced_ms": float(statistics.median(synced)),
            "p80_ms": float(first[2]), "spread": (max(medians) - min(medians)) / min(medians),
            "medians_ms": [float(m) for m in medians]}


def copy_bandwidth_gbps(nbytes: int = 2 << 30, warmup_ms: float = 25, rep_ms: float = 200) -> float:
    """Measured device-to-device copy bandwidth in GB/s (bytes read + bytes written, 1 GB = 1e9 B),
    the ceiling for data-movement kernels (device/METHOD.md: "measure the two ceilings")."""
    from triton.testing import do_bench

    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=warmup_ms, rep=rep_ms, return_mode="median")
    return 2 * nbytes / (ms * 1e-3) / 1e9


def matmul_tflops(n: int = 8192, dtype=torch.bfloat16, warmup_ms: float = 25, rep_ms: float = 200) -> float:
    """Measured dense matmul rate in TFLOP/s (2 * n^3 FLOPs per product) on random ``dtype`` data."""
    from triton.testing import do_bench

    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    ms = do_bench(lambda: a @ b, warmup=warmup_ms, rep=rep_ms, return_mode="median")
    return 2 * n**3 / (ms * 1e-3) / 1e12
