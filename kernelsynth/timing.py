"""Latency measurement (references/EXPLORATION.md, "Timing"). Runs in a worker.

``triton.testing.do_bench`` does the work (for candidates, :func:`bench`, its measurement with an
untimed step before each call): CUDA events on the current stream, the L2 cache cleared before
every repetition (it zeroes a 256 MB buffer), warm-up and repetition given in ms.
We ask it for the 20th, 50th and 80th percentiles and time each version ``repeats`` times; the
relative spread of the medians is recorded so selection can reject unstable timings.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import torch
import triton
import triton.language as tl


def bench(fn: Callable[[], object], before: Callable[[], object], warmup_ms: float, rep_ms: float,
          quantiles=(0.2, 0.5, 0.8)) -> List[float]:
    """``triton.testing.do_bench``'s measurement with ``before()`` run ahead of every call, outside
    the timed region: the same estimate from 5 calls, warm-up and repetition counts from
    ``warmup_ms`` / ``rep_ms``, the L2 cache cleared before every repetition (Triton's own 256 MB
    buffer, zeroed), one pair of CUDA events on the current stream around each call. ``before``
    runs before the L2 clear, so what it writes is not left in the cache. Returns the
    ``quantiles`` of the per-call times in ms."""
    try:
        from triton import runtime

        cache = runtime.driver.active.get_empty_cache_for_benchmark()
    except Exception:  # noqa: BLE001 - another Triton: the same buffer do_bench uses
        cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
    before()
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(5):
        before()
        cache.zero_()
        fn()
    e.record()
    torch.cuda.synchronize()
    estimate = max(s.elapsed_time(e) / 5, 1e-6)
    n_warmup, n_repeat = max(1, int(warmup_ms / estimate)), max(1, int(rep_ms / estimate))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        before()
        fn()
    for i in range(n_repeat):
        before()
        cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = torch.tensor([a.elapsed_time(b) for a, b in zip(starts, ends)], dtype=torch.float)
    return torch.quantile(times, torch.tensor(list(quantiles), dtype=torch.float)).tolist()


def time_ms(fn: Callable[[], object], warmup_ms: float, rep_ms: float, repeats: int = 2,
            before: Optional[Callable[[], object]] = None) -> Dict[str, float]:
    """Latency of ``fn()`` in ms.

    Returns ``median_ms`` (median of the repeats' medians), ``p20_ms`` and ``p80_ms`` (of the
    first repeat), ``medians_ms`` and ``spread``: (max - min) / min over the medians of ``repeats``
    independent do_bench calls. ``synced_ms``: the fastest of 5 calls timed on the host with a
    full device synchronisation, which includes work the candidate left on other streams (events
    on the current stream do not see it). The fastest, not the median: host jitter only ever adds
    time, while work that escapes the timed stream is in every call (session 20, H100: the median
    of an honest CUDA v5 config was 0.859 ms against an event-timed 0.346 ms, a false rejection;
    its other configs measured 1.2-1.5x). ``before``: run ahead of every call, untimed (:func:`bench`
    instead of do_bench; the candidates' timing uses it to change the input between calls).
    """
    from triton.testing import do_bench

    medians, first = [], None
    for _ in range(max(1, repeats)):
        if before is None:
            p20, p50, p80 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.2, 0.5, 0.8])
        else:
            p20, p50, p80 = bench(fn, before, warmup_ms, rep_ms)
        medians.append(p50)
        first = first or (p20, p50, p80)
    torch.cuda.synchronize()
    synced = []
    for _ in range(5):  # host clock around call + full device sync: sees work on every stream
        if before is not None:
            before()
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        synced.append((time.perf_counter() - start) * 1e3)
    return {"p20_ms": float(first[0]), "median_ms": float(statistics.median(medians)),
            "synced_ms": float(min(synced)),
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


# ------------------------------------------------------------------------------ ceilings
#: Square bf16 matmul sizes the matmul ceiling is the best of.
MATMUL_SIZES = (8192, 16384)


def _gbps(nbytes: int, ms: float) -> float:
    return 2 * nbytes / (ms * 1e-3) / 1e9


def _bench(fn, warmup_ms: float = 25, rep_ms: float = 200) -> float:
    from triton.testing import do_bench

    return do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")


@triton.jit
def _stream_copy_kernel(src, dst, BLOCK: tl.constexpr, L2_ONLY: tl.constexpr):
    """A vectorised Triton copy with streaming cache hints: loads marked evict-first (or, with
    ``L2_ONLY``, cached at L2 only: ``.cg``), stores marked streaming (``.cs``); no mask (the
    size is a multiple of the block), so every access is a full 16-byte vector. PTX takes one
    cache operator or one eviction priority per load, so the two hints are two variants."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if L2_ONLY:
        x = tl.load(src + offs, cache_modifier=".cg")
    else:
        x = tl.load(src + offs, eviction_policy="evict_first")
    tl.store(dst + offs, x, cache_modifier=".cs")


#: The CUDA copy: 16-byte loads and stores with the streaming hint (``ld/st.global.cs.v4``, in
#: inline PTX so no intrinsic or vector-type header is needed), four per thread, all loads issued
#: before the stores. Self-contained: NVRTC compiles it with no include.
CUDA_COPY16 = r"""
struct alignas(16) ks_v4 { int x, y, z, w; };

__device__ __forceinline__ ks_v4 ks_load_stream(const ks_v4* p) {
  ks_v4 v;
  asm volatile("ld.global.cs.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ void ks_store_stream(ks_v4* p, ks_v4 v) {
  asm volatile("st.global.cs.v4.s32 [%0], {%1, %2, %3, %4};"
               :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

extern "C" __global__ void ks_copy16(const ks_v4* __restrict__ src, ks_v4* __restrict__ dst, int n) {
  const int base = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  ks_v4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) { const int j = base + k * blockDim.x; if (j < n) v[k] = ks_load_stream(src + j); }
#pragma unroll
  for (int k = 0; k < 4; ++k) { const int j = base + k * blockDim.x; if (j < n) ks_store_stream(dst + j, v[k]); }
}
"""


def copy_methods(nbytes: int = 2 << 30, cache: Optional[Path] = None) -> List[Dict[str, Any]]:
    """Device-to-device copy GB/s (bytes read + written) of each method, on one pair of
    ``nbytes`` buffers: ``torch_copy`` (``Tensor.copy_``), ``triton_stream`` (:func:`_stream_copy_kernel`,
    the best of two block sizes x two load hints) and ``cuda_copy16`` (:data:`CUDA_COPY16` through NVRTC,
    kernelsynth/backends/cuda.py). Each entry: ``ceiling`` ("copy"), ``method``, ``value`` (GB/s;
    None when it failed), ``unit``, ``detail`` and ``error`` (why it failed; None)."""
    n = nbytes // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    out = []

    def method(name, detail, run):
        entry = {"ceiling": "copy", "method": name, "value": None, "unit": "GB/s", "detail": detail, "error": None}
        try:
            dst.zero_()
            entry["value"] = run()
            if not torch.equal(dst, src):
                entry.update(value=None, error="the copy's output differs from its input")
        except Exception as e:  # noqa: BLE001 - one method failing leaves the others
            entry["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
        out.append(entry)

    method("torch_copy", f"Tensor.copy_ of {nbytes / 2**30:.0f} GiB float32",
           lambda: _gbps(nbytes, _bench(lambda: dst.copy_(src))))

    def triton_copy():
        best, errors = None, []
        for block, l2_only in ((4096, False), (8192, False), (4096, True), (8192, True)):
            if n % block:
                continue
            launch = lambda b=block, c=l2_only: _stream_copy_kernel[(n // b,)](  # noqa: E731
                src, dst, BLOCK=b, L2_ONLY=c, num_warps=8)
            try:
                launch()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a variant the compiler rejects leaves the others
                errors.append(f"BLOCK {block}{' .cg' if l2_only else ''}: {type(e).__name__}")
                continue
            gbps = _gbps(nbytes, _bench(launch))
            best = gbps if best is None else max(best, gbps)
        if best is None:
            raise RuntimeError("no variant ran: " + "; ".join(errors))
        return best

    method("triton_stream", "Triton, 16 B vectors, loads evict_first or .cg, stores .cs; best of BLOCK 4096, 8192",
           triton_copy)

    def cuda_copy():
        from .backends.cuda import compile_kernel

        major, minor = torch.cuda.get_device_capability()
        kernel = compile_kernel(CUDA_COPY16, "ks_copy16", ["KS_COPY16=1"], f"sm_{major}{minor}", cache)
        n16 = nbytes // 16
        threads = 256
        grid = (n16 + threads * 4 - 1) // (threads * 4)
        launch = lambda: kernel.launch([grid, 1, 1], [threads, 1, 1], 0,  # noqa: E731
                                       torch.cuda.current_stream().cuda_stream, [src, dst, n16])
        launch()
        torch.cuda.synchronize()
        return _gbps(nbytes, _bench(launch))

    method("cuda_copy16", "CUDA C++ (NVRTC), 16 B ld/st.global.cs, 4 per thread, 256 threads", cuda_copy)
    del src, dst
    torch.cuda.empty_cache()
    return out


def matmul_methods(sizes=MATMUL_SIZES) -> List[Dict[str, Any]]:
    """bf16 matmul TFLOP/s (2 n^3 FLOPs per product) of ``torch.matmul`` at each square size
    (entries as in :func:`copy_methods`, ``ceiling`` "matmul")."""
    out = []
    for n in sizes:
        entry = {"ceiling": "matmul", "method": f"torch_mm_bf16_{n}", "value": None, "unit": "TFLOP/s",
                 "detail": f"torch.matmul, bf16, {n}x{n}x{n}, random data", "error": None}
        try:
            entry["value"] = matmul_tflops(n)
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
        out.append(entry)
        torch.cuda.empty_cache()
    return out


def measure_ceilings(copy_bytes: int = 2 << 30, sizes=MATMUL_SIZES, cache: Optional[Path] = None) -> Dict[str, Any]:
    """``copy_gbps`` and ``matmul_tflops``: the best of :func:`copy_methods` and of
    :func:`matmul_methods`; ``methods``: every method's entry. Raises RuntimeError when every
    method of a ceiling failed."""
    methods = copy_methods(copy_bytes, cache) + matmul_methods(sizes)
    best = {}
    for kind in ("copy", "matmul"):
        values = [m["value"] for m in methods if m["ceiling"] == kind and m["value"] is not None]
        if not values:
            raise RuntimeError(f"every {kind} ceiling method failed: "
                               + "; ".join(f"{m['method']}: {m['error']}" for m in methods if m["ceiling"] == kind))
        best[kind] = max(values)
    return {"copy_gbps": best["copy"], "matmul_tflops": best["matmul"], "methods": methods}
