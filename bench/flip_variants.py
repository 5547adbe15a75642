"""flip2d v4 against schedule variants in 2-byte dtypes, outside the harness (issue 14 item 4 on an H100).

On the H100 (session 27) v4 and torch.compile's flip both sit at the copy ceiling in bfloat16 and
float16 and v4 is 0.3-0.4 % slower. This script times v4's kernel with one schedule change at a time,
in rounds (every kernel once per round, the rounds interleaved, so drift hits all alike), and prints
the median over rounds:

- ``v4``: the spec's kernel and configs (32-bit words, evict_last loads);
- ``cs``: the store marked streaming (``cache_modifier=".cs"``: the written lines are not kept in L2);
- ``asc``: programs ordered so that consecutive programs *read* ascending addresses (v4's write
  ascending, read descending);
- ``plain`` 2048w/16: 2048-word tiles with 16 warps (session 27's probe: 1.002x); ``cs`` / ``asc`` at
  2048w/16 too;
- ``elem``: v4's kernel on the 2-byte elements (one per lane; session 34 on an H100: 0.984x torch.compile);
- ``v5``: the spec's v5 (16-byte mirrored loads reversed in registers) at its configs;
- ``flat-elem`` / ``flat-words``: TorchInductor's flat 1D index (row and column per lane, ``num_stages=1``)
  over elements (its own kernel) or 32-bit words;
- ``v5-elem``: v5's kernel on the 2-byte elements (eight per 16-byte chunk, no swap) instead of words.

Every variant is checked bit-exact against torch.flip at the timing shape before it is timed.

Usage (repo root, GPU machine): timeout 150 python3 bench/flip_variants.py
Environment: FLIPV_DTYPES (default bfloat16,float16), FLIPV_ROUNDS (default 3).
Writes $OUT/flip_variants.txt when OUT is set.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.getcwd())
from kernelsynth.loading import import_file  # noqa: E402
from kernelsynth.spec import load_spec  # noqa: E402

T0 = time.time()
LINES: list = []


@triton.jit
def _flip_words(X, Y, NW, NB, BLOCK_N: tl.constexpr, CS: tl.constexpr, ASC: tl.constexpr):
    # X, Y: (M, NW) uint32 words (two 2-byte elements each); one row per program, NB tiles per row;
    # NW % BLOCK_N == 0 (checked by the caller)
    pid = tl.program_id(0)
    row = pid // NB
    pn = pid - row * NB
    if ASC:  # program pn reads tile pn (ascending) and writes the mirrored tile
        cols = (NB - 1 - pn) * BLOCK_N + tl.arange(0, BLOCK_N)
    else:
        cols = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    base = row * NW
    w = tl.load(X + base + (NW - 1 - cols), eviction_policy="evict_last")
    w = (w << 16) | (w >> 16)
    if CS:
        tl.store(Y + base + cols, w, cache_modifier=".cs")
    else:
        tl.store(Y + base + cols, w)


def words_flip(block_n, warps, cs, asc):
    def run(x):
        M, N = x.shape
        y = torch.empty_like(x)
        nw = N // 2
        assert nw % block_n == 0 and M * nw < 2 ** 31
        nb = nw // block_n
        _flip_words[(M * nb,)](x.view(torch.uint32), y.view(torch.uint32), nw, nb, BLOCK_N=block_n, CS=cs,
                               ASC=asc, num_warps=warps)
        return y
    return run


def elements_flip(v4, block_n, warps):
    """v4's kernel on the 2-byte elements themselves (no 32-bit words): TorchInductor's flip schedule."""
    def run(x):
        M, N = x.shape
        y = torch.empty_like(x)
        assert N % block_n == 0 and M * N < 2 ** 31
        nb = N // block_n
        v4._flip_kernel[(M * nb,)](x, y, M, N, nb, BLOCK_M=1, BLOCK_N=block_n, SWAP=False, EVEN=True, WIDE=False,
                                   EVICT="evict_last", num_warps=warps)
        return y
    return run


@triton.jit
def _flip_flat(X, Y, NW, XBLOCK: tl.constexpr, SWAP: tl.constexpr):
    # Inductor's flat schedule: one 1D block of XBLOCK words, row and column per lane
    idx = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    c = idx % NW
    r = idx // NW
    w = tl.load(X + (NW - 1 - c + r * NW), eviction_policy="evict_last")
    if SWAP:
        w = (w << 16) | (w >> 16)
    tl.store(Y + idx, w)


def flat_flip(xblock, warps, words):
    def run(x):
        M, N = x.shape
        y = torch.empty_like(x)
        xv, yv, nw = (x.view(torch.uint32), y.view(torch.uint32), N // 2) if words else (x.view(torch.int16), y.view(torch.int16), N)
        assert (M * nw) % xblock == 0 and M * nw < 2 ** 31
        _flip_flat[(M * nw // xblock,)](xv, yv, nw, XBLOCK=xblock, SWAP=words, num_warps=warps, num_stages=1)
        return y
    return run


def elements_chunks_flip(v5, block_n, warps):
    """v5's kernel on the 2-byte elements (eight per 16-byte chunk, no word swap) instead of 32-bit words."""
    def run(x):
        M, N = x.shape
        y = torch.empty_like(x)
        assert N % block_n == 0 and M * N < 2 ** 31
        nb = N // block_n
        v5._flip_chunks_kernel[(M * nb,)](x.view(torch.int16), y.view(torch.int16), M, N, nb, BLOCK_M=1,
                                          BLOCK_N=block_n, V=8, LOGV=3, SWAP=False, MODE=0, WIDE=False,
                                          EVICT="evict_last", num_warps=warps)
        return y
    return run


def log(msg: str = "") -> None:
    print(msg, flush=True)
    LINES.append(msg)


def main() -> int:
    spec = load_spec("specs/flip2d/spec.yaml", task_folder=True)
    v4c = {c.version: c for c in spec.candidates}["v4"]
    v4 = import_file(v4c.file)
    v5c = {c.version: c for c in spec.candidates}["v5"]
    v5 = import_file(v5c.file)
    M, N = spec.timing_shape["M"], spec.timing_shape["N"]
    rounds = int(os.environ.get("FLIPV_ROUNDS", "3"))
    log(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}; {rounds} rounds")
    bad = 0
    for dt in os.environ.get("FLIPV_DTYPES", "bfloat16,float16").split(","):
        dtype = getattr(torch, dt)
        g = torch.Generator(device="cuda").manual_seed(3)
        x = torch.randint(-2 ** 15, 2 ** 15, (M, N), dtype=torch.int32, device="cuda", generator=g)
        x = x.to(torch.int16).view(dtype)
        want = torch.flip(x, dims=[1]).view(torch.int16)
        nbytes = 2 * x.numel() * x.element_size()
        y = torch.empty_like(x)
        kernels = {"torch copy_": lambda: y.copy_(x)}
        comp = torch.compile(lambda t: torch.flip(t, dims=[1]))
        kernels["torch.compile flip"] = lambda: comp(x)
        for cfg in v4c.configs():
            m = v4.ModelNew(**cfg)
            kernels[f"v4 {cfg['BLOCK_N']}w/{cfg['num_warps']}"] = lambda m=m: m(x)
        for cfg in v5c.configs():
            m = v5.ModelNew(**cfg)
            kernels[f"v5 {cfg['BLOCK_N']}w/{cfg['num_warps']}"] = lambda m=m: m(x)
        for bn, nw_ in ((512, 4), (1024, 4), (1024, 8), (2048, 16)):
            for cs, asc, tag in ((True, False, "cs"), (False, True, "asc"), (False, False, "plain")):
                if tag == "plain" and bn != 2048:
                    continue
                kernels[f"{tag} {bn}w/{nw_}"] = (lambda f=words_flip(bn, nw_, cs, asc): f(x))
        for bn, nw_ in ((1024, 4), (512, 8)):  # Inductor's own schedule: one 2-byte element per lane
            kernels[f"elem {bn}w/{nw_}"] = (lambda f=elements_flip(v4, bn, nw_): f(x))
        for xb, nw_ in ((1024, 4), (2048, 8)):  # Inductor's flat 1D schedule, elements (its own kernel) and words
            kernels[f"flat-elem {xb}/{nw_}"] = (lambda f=flat_flip(xb, nw_, False): f(x))
        for xb, nw_ in ((512, 4), (1024, 4), (1024, 8), (2048, 8)):
            kernels[f"flat-words {xb}/{nw_}"] = (lambda f=flat_flip(xb, nw_, True): f(x))
        for bn, nw_ in ((1024, 4), (2048, 4), (2048, 8), (4096, 8)):  # v5 on elements, not words
            kernels[f"v5-elem {bn}/{nw_}"] = (lambda f=elements_chunks_flip(v5, bn, nw_): f(x))
        times = {k: [] for k in kernels}
        for k, fn in list(kernels.items()):
            if k != "torch copy_":
                out = fn()
                torch.cuda.synchronize()
                if not torch.equal(out.view(torch.int16), want):
                    log(f"{dt} {k}: NOT bit-exact -- dropped")
                    bad += 1
                    del kernels[k], times[k]
                del out
        for r in range(rounds):
            for k, fn in kernels.items():
                times[k].append(triton.testing.do_bench(fn, warmup=10, rep=60, return_mode="median"))
        med = {k: statistics.median(v) for k, v in times.items()}
        copy_ms, comp_ms = med["torch copy_"], med["torch.compile flip"]
        log(f"\n==== {dt} at {M}x{N}: median over {rounds} rounds (each a do_bench median, L2 flushed)")
        log("| kernel | ms | GB/s | % of copy_ | x torch.compile | rounds (ms) |")
        log("|---|---|---|---|---|---|")
        for k, ms in sorted(med.items(), key=lambda kv: kv[1]):
            log(f"| {k} | {ms:.4f} | {nbytes / ms / 1e6:.0f} | {100 * copy_ms / ms:.1f} | {comp_ms / ms:.4f} | "
                + " ".join(f"{t:.4f}" for t in times[k]) + " |")
        del x, y, want
        torch.cuda.empty_cache()
    log(f"\nnot bit-exact: {bad}; total {time.time() - T0:.0f} s")
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "flip_variants.txt"), "w").write("\n".join(LINES) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
