"""H200 probe of flip2d v4 (Inductor's schedule) beside v1, v2, v3, torch.compile and torch copy_, outside
the harness, in one call of under 1.5 minutes.

1. Checks v4 bit-exact against torch.flip on ragged shapes in every dtype of the spec (every path:
   32-bit words, elements, masked and mask-free; in float32 and bfloat16 every config and eviction
   policy) and, for every timed kernel, at the timing shape.
2. Times at the timing shape 32768 x 16384 in float32 and bfloat16 (triton.testing.do_bench, median
   ms, L2 flushed between calls): torch copy_ (the copy ceiling's main method), torch.compile's
   flip, every v4 config with each load eviction policy (evict_last: Inductor's; none;
   evict_first), and the configs of v1, v2 and v3 that fit the budget. Prints GB/s (2 * M * N *
   itemsize / latency), % of copy_ and x torch.compile, and issue 14 item 4's targets (best version
   >= 1.0x torch.compile and >= 97 % of the copy).

Usage (repo root, GPU machine): timeout 120 python3 bench/flip_probe.py
Environment: ``FLIP_PROBE_DTYPES`` (default ``float32,bfloat16``) the timed dtypes;
``FLIP_V4_EXTRA="2048:8,4096:8"`` more v4 configs (BLOCK_N:num_warps, BLOCK_M 1), timed with evict_last
and no policy beside the spec's (and checked bit-exact at the timing shape); ``FLIP_PROBE_LADDER=0``
leaves v1-v3 out of the timing.
Writes the text to $OUT/flip_probe.txt and a JSON summary to $OUT/flip_probe.json when OUT is set.
Exit 1 when v4 is not bit-exact somewhere.
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch
import triton

sys.path.insert(0, os.getcwd())
from kernelsynth.loading import import_file  # noqa: E402
from kernelsynth.spec import load_spec  # noqa: E402

T0 = time.time()
BUDGET_S = float(os.environ.get("PROBE_BUDGET_S", "80"))
SPEC = load_spec("specs/flip2d/spec.yaml", task_folder=True)
CANDS = {c.version: c for c in SPEC.candidates}
M, N = SPEC.timing_shape["M"], SPEC.timing_shape["N"]
LINES: list = []
SUMMARY: dict = {"exact": {}, "timing": {}}


def log(msg: str = "") -> None:
    print(msg, flush=True)
    LINES.append(msg)


def left() -> float:
    return BUDGET_S - (time.time() - T0)


def random_bits(shape, dtype, seed):
    """Random bit patterns (NaN payloads, infinities, -0.0, subnormals included) of dtype."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    es = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(-2 ** 15, 2 ** 15, shape, dtype=torch.int32, device="cuda", generator=g)
    if es == 4:
        raw = raw * 65536 + torch.randint(0, 2 ** 16, shape, dtype=torch.int32, device="cuda", generator=g)
        return raw.view(dtype)
    return raw.to(torch.int16).view(dtype)


def same_bits(a, b) -> bool:
    view = torch.int16 if a.element_size() == 2 else torch.int32
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(view), b.view(view))


def first_diff(a, b):
    view = torch.int16 if a.element_size() == 2 else torch.int32
    d = (a.view(view) != b.view(view)).nonzero()
    return d[0].tolist() if len(d) else None


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=60, return_mode="median")


def main() -> int:
    log(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}")
    v4 = import_file(CANDS["v4"].file)
    bad = 0
    # 1. v4 bit-exact on ragged shapes, every dtype, every config and eviction policy
    shapes = [dict(s) for s in SPEC.verify_shapes] + [{"M": 5853, "N": 5541}, {"M": 3, "N": 16384},
                                                         {"M": 1025, "N": 1024}, {"M": 2, "N": 2}]
    for dt in SPEC.dtypes:
        dtype = getattr(torch, dt)
        fails = []
        for i, s in enumerate(shapes):
            x = random_bits((s["M"], s["N"]), dtype, i)
            want = torch.flip(x, dims=[1])
            cfgs = CANDS["v4"].configs()
            combos = [(cfgs[0], "evict_last")]  # every dtype: the first config; float32/bfloat16: all
            if dt in ("float32", "bfloat16"):
                combos += [(c, "evict_last") for c in cfgs[1:]] + [(cfgs[0], ""), (cfgs[0], "evict_first")]
            for cfg, ev in combos:
                y = v4.ModelNew(**cfg, EVICT=ev)(x)
                if not same_bits(y, want):
                    fails.append(f"{s} {cfg} EVICT={ev!r}: first differing index {first_diff(y, want)}")
        # misaligned input for the 2-byte word path (storage offset of one element)
        buf = random_bits((3 * 130 + 1,), dtype, 99)
        x = buf[1:].view(3, 130)
        if not same_bits(v4.ModelNew()(x), torch.flip(x, dims=[1])):
            fails.append("misaligned 3x130")
        SUMMARY["exact"][dt] = fails
        bad += len(fails)
        log(f"v4 {dt}: bit-exact on {len(shapes) + 1} shapes x {len(combos)} (config, eviction policy): "
            f"{'ok' if not fails else 'FAIL'}" + "".join("\n  " + f for f in fails[:10]))
    # 2. timing at M x N
    for dt in os.environ.get("FLIP_PROBE_DTYPES", "float32,bfloat16").split(","):
        dtype = getattr(torch, dt)
        x = random_bits((M, N), dtype, 7)
        want = torch.flip(x, dims=[1])
        nbytes = 2 * x.numel() * x.element_size()
        times = {}
        y = torch.empty_like(x)
        times["torch copy_"] = bench(lambda: y.copy_(x))
        comp = torch.compile(lambda t: torch.flip(t, dims=[1]))
        out = comp(x)
        if not same_bits(out, want):
            log(f"{dt} torch.compile: NOT exact")
        times["torch.compile flip"] = bench(lambda: comp(x))
        times["eager torch.flip"] = bench(lambda: torch.flip(x, dims=[1]))
        del out
        runs = [("v4", cfg, {"EVICT": ev}) for ev in ("evict_last", "", "evict_first") for cfg in CANDS["v4"].configs()]
        extra_cfgs = [dict(BLOCK_M=1, BLOCK_N=int(b), num_warps=int(w)) for b, w in
                      (e.split(":") for e in os.environ.get("FLIP_V4_EXTRA", "").split(",") if e)]
        runs += [("v4", cfg, {"EVICT": ev}) for ev in ("evict_last", "") for cfg in extra_cfgs]
        if os.environ.get("FLIP_PROBE_LADDER", "1") != "0":
            runs += [(v, cfg, {}) for v in ("v3", "v2", "v1") for cfg in CANDS[v].configs()]
        mods = {v: (v4 if v == "v4" else import_file(CANDS[v].file)) for v in ("v1", "v2", "v3", "v4")}
        for v, cfg, extra in runs:
            if left() < 8:
                log(f"{dt}: budget spent, {v} {cfg} and later not timed")
                break
            model = mods[v].ModelNew(**cfg, **extra)
            out = model(x)
            exact = same_bits(out, want)
            del out
            name = f"{v} {cfg}" + (f" EVICT={extra['EVICT']!r}" if extra else "")
            if not exact:
                log(f"{dt} {name}: NOT exact at the timing shape")
                bad += v == "v4"
                continue
            times[name] = bench(lambda: model(x))
        copy_ms, comp_ms = times["torch copy_"], times["torch.compile flip"]
        log(f"\n==== {dt} at {M}x{N} ({nbytes / 2**30:.0f} GiB moved per call)")
        log("| kernel | ms | GB/s | % of copy_ | x torch.compile |")
        log("|---|---|---|---|---|")
        for name, ms in sorted(times.items(), key=lambda kv: kv[1]):
            log(f"| {name} | {ms:.4f} | {nbytes / ms / 1e6:.0f} | {100 * copy_ms / ms:.1f} | {comp_ms / ms:.3f} |")
        best = {}
        for name, ms in times.items():
            v = name.split(" ")[0]
            if v.startswith("v") and (v not in best or ms < best[v][0]):
                best[v] = (ms, name)
        for v in sorted(best):
            ms, name = best[v]
            log(f"{dt} best {v}: {name} {ms:.4f} ms, {100 * copy_ms / ms:.1f} % of copy_, {comp_ms / ms:.3f}x compile"
                + ("  <- targets met" if v == "v4" and comp_ms / ms >= 1.0 and copy_ms / ms >= 0.97 else ""))
        SUMMARY["timing"][dt] = times
        del x, y, want
        torch.cuda.empty_cache()
    log(f"\nv4 exactness failures: {bad}; total {time.time() - T0:.0f} s")
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "flip_probe.txt"), "w").write("\n".join(LINES) + "\n")
        json.dump(SUMMARY, open(os.path.join(out, "flip_probe.json"), "w"), indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
