"""On a GPU: rule 23's fused per-trial sums (kernelsynth.verify.fused_sums) against the PyTorch
operations of precision.trial_sums and comparison.compare -- the same counts, sums to rounding, the
same comparison maxima -- and the memo's fingerprint hash (refmemo._hash: the same int64 pair), with the
time of each path per call, by output size:

    python bench/fused_sums_check.py [--sizes 1000,100000,1000000,16777216]

Exit status 1 when any number differs (then run with KERNELSYNTH_FUSED_SUMS=0 to keep the PyTorch
path). Times: CUDA-event medians of 20 calls after 3 warm-up calls, each call including its host
work and its one device synchronisation (what a trial pays)."""

import math
import os
import statistics
import sys

import torch


def operands(n, dtype, n_honest, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    r = torch.randn(n, generator=g, device="cuda", dtype=torch.float64) * 3
    s = (torch.rand(n, generator=g, device="cuda") + 0.05)
    o = (r + torch.randn(n, generator=g, device="cuda", dtype=torch.float64) * 1e-3).to(dtype)
    hs = [(r + torch.randn(n, generator=g, device="cuda", dtype=torch.float64) * 1e-4).to(dtype) for _ in range(n_honest)]
    k = max(1, n // 500)
    idx = lambda: torch.randint(0, n, (k,), generator=g, device="cuda")  # noqa: E731
    r[idx()] = float("nan")
    s[idx()] = 0.0
    o[idx()] = float("nan")
    lowv = idx()
    o[lowv] = o[lowv].to(torch.float16).to(dtype)
    for h in hs:
        h[lowv[: k // 2]] = o[lowv[: k // 2]]
    return o, r, s, hs


def same(a, b):
    for key in a:
        x, y = a[key], b[key]
        xs = x if isinstance(x, (list, tuple)) else [x]
        ys = y if isinstance(y, (list, tuple)) else [y]
        flat = lambda v: [w for u in v for w in (u if isinstance(u, (list, tuple)) else [u])]  # noqa: E731
        for p, q in zip(flat(xs), flat(ys)):
            if isinstance(p, int) and p != q:
                return f"{key}: {x} != {y}"
            if isinstance(p, float) and not math.isclose(p, q, rel_tol=1e-9, abs_tol=1e-300):
                return f"{key}: {x} != {y}"
    return None


def timed(fn):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def main(argv):
    sizes = [1000, 100_000, 1_000_000, 16_777_216]
    if "--sizes" in argv:
        sizes = [int(x) for x in argv[argv.index("--sizes") + 1].split(",")]
    from kernelsynth.verify.comparison import compare
    from kernelsynth.verify.precision import trial_sums
    bad = 0
    print(f"{'n':>10} {'dtype':>9} {'honest':>6} {'torch ms':>9} {'fused ms':>9} {'cmp torch':>9} {'cmp fused':>9}  check")
    for n in sizes:
        for dtype, nh in ((torch.float32, 2), (torch.bfloat16, 2), (torch.float32, 0)):
            o, r, s, hs = operands(n, dtype, nh)
            kw = dict(slack=1e-5, linear=True, room=8.0, relative=2.0 ** -16 if dtype == torch.float32 else None)
            results, times, ctimes = {}, {}, {}
            rr = r.clone()
            rr[torch.isnan(rr)] = 0
            ok = (rr + 1e-3 * torch.randn_like(rr)).to(dtype)
            for mode in ("0", "1"):
                os.environ["KERNELSYNTH_FUSED_SUMS"] = mode
                results[mode] = trial_sums(o, r, s, hs, **kw)
                times[mode] = timed(lambda: trial_sums(o, r, s, hs, **kw))
                cmp = compare(ok, rr, "allclose", {"atol": 1.0, "rtol": 1.0}, dtype)
                results["c" + mode] = cmp
                ctimes[mode] = timed(lambda: compare(ok, rr, "allclose", {"atol": 1.0, "rtol": 1.0}, dtype))
            diff = same(results["0"], results["1"]) or same(results["c0"], results["c1"])
            bad += diff is not None
            print(f"{n:>10} {str(dtype)[6:]:>9} {nh:>6} {times['0']:>9.3f} {times['1']:>9.3f} {ctimes['0']:>9.3f} "
                  f"{ctimes['1']:>9.3f}  {diff or 'same'}", flush=True)
    # the memo's fingerprints and the kept outputs' hashes (refmemo._hash): the same int64 pair on both paths
    from kernelsynth.verify import refmemo
    print(f"{'n':>10} {'dtype':>9} {'hash torch ms':>13} {'hash fused ms':>13}  check")
    for n in sizes:
        for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.int8, torch.bool):
            g = torch.Generator(device="cuda").manual_seed(n)
            x = (torch.randn(n, generator=g, device="cuda", dtype=torch.float64) * 1e30)
            x = x > 0 if dtype == torch.bool else (x.clamp(-127, 127) if dtype == torch.int8 else x).to(dtype)
            got, ht = {}, {}
            for mode in ("0", "1"):
                os.environ["KERNELSYNTH_FUSED_SUMS"] = mode
                got[mode] = refmemo._hash(x).tolist()
                ht[mode] = timed(lambda: refmemo._hash(x).tolist())
            diff = None if got["0"] == got["1"] else f"{got['0']} != {got['1']}"
            bad += diff is not None
            print(f"{n:>10} {str(dtype)[6:]:>9} {ht['0']:>13.3f} {ht['1']:>13.3f}  {diff or 'same'}", flush=True)
    os.environ.pop("KERNELSYNTH_FUSED_SUMS", None)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
