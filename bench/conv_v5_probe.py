"""H200 probe of conv_relu_maxpool v5 (native CUDA, mma.sync from raw cp.async tiles) beside v3, v4,
eager and torch.compile, outside the harness, in one call of under 3 minutes.

1. Compiles every dtype x config of v4 and v5 by NVRTC through kernelsynth/backends/cuda.py
   (a compile error prints NVRTC's whole log) and prints registers / local (spill) bytes.
2. Checks each build on ragged shapes (the spec's verify shapes, the harness's joint and large
   ragged shapes, a misaligned input for the element path, the timing shape) against a float64
   reference of the same dtype-rounded weights and input (as kernelsynth/jobs.py does) and against
   eager at the job dtype: max |err|, max (|err| - rtol |ref|) against atol, and for a failure the
   first mismatching index (n, k, ph, pw) with the values there and the count of bad elements.
3. Times v3 (every config), v4, v5, eager and torch.compile at the timing shape (N=32, C_in=64,
   C_out=128, H=W=128) in float32 (TF32) and bfloat16 with triton.testing.do_bench (median ms),
   and prints x eager / x torch.compile for the best config of each version and the targets of
   issue 14 item 1 (>= 2x eager, >= 1.1x torch.compile).

Usage (repo root, GPU machine): timeout 180 python3 bench/conv_v5_probe.py
Writes the same text to $OUT/conv_v5_probe.txt and a JSON summary to $OUT/conv_v5_probe.json when
OUT is set. Exit 1 when any v5 build fails to compile or verify.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

import torch
import triton

sys.path.insert(0, os.getcwd())
from kernelsynth.backends import cuda as kc  # noqa: E402
from kernelsynth.loading import import_file  # noqa: E402
from kernelsynth.spec import load_spec  # noqa: E402

T0 = time.time()
BUDGET_S = float(os.environ.get("PROBE_BUDGET_S", "165"))
SPEC = load_spec("specs/conv_relu_maxpool/spec.yaml", task_folder=True)
REF = import_file("specs/conv_relu_maxpool/reference.py")
CANDS = {c.version: c for c in SPEC.candidates}
TOL = {dt: (float(SPEC.tolerance[dt]["atol"]), float(SPEC.tolerance[dt]["rtol"])) for dt in SPEC.dtypes}
TIMING = dict(SPEC.timing_shape)
# ragged shapes (N, C_in, C_out, H, W) beyond the spec's: column tiles, channel tails, C_out tails,
# the element paths (odd W; C_in not a multiple of 8 / 16), and the harness's GPU joint shapes
EXTRA = [(1, 7, 130, 19, 131), (2, 24, 200, 33, 264), (1, 64, 128, 9, 256), (3, 130, 33, 6, 40),
         (7, 379, 257, 7, 7), (33, 35, 29, 33, 29), (7, 7, 373, 259, 7), (1, 16, 16, 2, 2050)]
LINES: list = []
SUMMARY: dict = {"builds": [], "timing": {}}


def log(msg: str = "") -> None:
    print(msg, flush=True)
    LINES.append(msg)


def left() -> float:
    return BUDGET_S - (time.time() - T0)


def shape_dict(s):
    return s if isinstance(s, dict) else dict(zip(["N", "C_in", "C_out", "H", "W"], s))


_REFS: dict = {}


def problem(shape: dict, dt: str, misaligned: bool = False):
    """(model at dt, x at dt, float64 reference output, eager output at dt), cached per shape."""
    key = (tuple(shape.values()), dt, misaligned)
    if key in _REFS:
        return _REFS[key]
    dtype = getattr(torch, dt)
    torch.manual_seed(0)
    ref = REF.Model(*REF.get_init_inputs(shape)).to("cuda", dtype).eval()
    g = torch.Generator(device="cuda").manual_seed(1)
    (x,) = REF.get_inputs(shape, dtype, "cuda", g)
    if misaligned:  # same values, storage offset of one element: not 16-byte aligned
        buf = torch.empty(x.numel() + 1, dtype=dtype, device="cuda")
        buf[1:].copy_(x.reshape(-1))
        x = buf[1:].view(x.shape)
    ref64 = REF.Model(*REF.get_init_inputs(shape)).to("cuda", torch.float64)
    ref64.load_state_dict({k: v.double() for k, v in ref.state_dict().items()})
    with torch.no_grad():
        want = ref64(x.double())
        eager = ref(x)
    _REFS.clear() if len(_REFS) > 24 else None
    _REFS[key] = (ref, x, want, eager)
    return _REFS[key]


def check(y, want, eager, dt):
    """Errors of y against the float64 reference and eager; the first mismatch if any."""
    atol, rtol = TOL[dt]
    if tuple(y.shape) != tuple(want.shape):
        return {"ok": False, "why": f"shape {tuple(y.shape)} != {tuple(want.shape)}"}
    yd = y.double()
    err = (yd - want).abs()
    excess = err - rtol * want.abs()
    bad = ~(excess <= atol)  # NaN counts as bad
    out = {"max_abs_err": err.max().item(), "max_excess": excess.max().item(),
           "max_abs_vs_eager": (yd - eager.double()).abs().max().item(),
           "eager_max_abs_err": (eager.double() - want).abs().max().item(), "n_bad": int(bad.sum().item()),
           "ok": not bool(bad.any())}
    if bad.any():
        idx = [int(i) for i in bad.nonzero()[0].tolist()]
        out["first_bad"] = {"index (n,k,ph,pw)": idx, "got": yd[tuple(idx)].item(), "want": want[tuple(idx)].item(),
                            "eager": eager[tuple(idx)].item()}
        k_bad = bad.any(dim=(0, 2, 3)).nonzero().flatten().tolist()
        pw_bad = bad.any(dim=(0, 1, 2)).nonzero().flatten().tolist()
        ph_bad = bad.any(dim=(0, 1, 3)).nonzero().flatten().tolist()
        out["bad_k"] = k_bad[:12] + (["..."] if len(k_bad) > 12 else [])
        out["bad_ph"] = ph_bad[:12] + (["..."] if len(ph_bad) > 12 else [])
        out["bad_pw"] = pw_bad[:12] + (["..."] if len(pw_bad) > 12 else [])
    return out


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def raw_builds(version: str, dt: str, arch: str):
    cand = CANDS[version]
    src = open(cand.file).read()
    for cfg in cand.configs():
        yield cand, src, cfg


def verify_raw(version: str, dt: str, arch: str, shapes):
    """Compile and verify every config of a raw CUDA version; returns {config str: model factory}."""
    ok_builds = {}
    for cand, src, cfg in raw_builds(version, dt, arch):
        label = f"{version} {dt} {cfg}"
        row = {"version": version, "dtype": dt, "config": cfg, "shapes": []}
        SUMMARY["builds"].append(row)
        try:
            ref, x, _, _ = problem(shape_dict(shapes[0][0]), dt)
            t = time.time()
            model = kc.RawKernelModel(ref, src, cand.launch, SPEC.interface, cfg, dt, arch)
            st = model.compile_stats()
            row["stats"] = {k: st[k] for k in ("n_regs", "local_bytes", "shared_bytes", "compile_s")}
            log(f"{label}: compiled in {time.time() - t:.1f} s, regs {st['n_regs']}, local bytes "
                f"{st['local_bytes']} (spills), static smem {st['shared_bytes']}")
        except kc.CudaCompileError as e:
            row["error"] = str(e)
            log(f"{label}: COMPILE ERROR\n{e}")
            continue
        except Exception as e:  # noqa: BLE001
            row["error"] = repr(e)
            log(f"{label}: ERROR building: {traceback.format_exc()[-3000:]}")
            continue
        all_ok = True
        for s, misaligned in shapes:
            if left() < 40:
                log(f"{label}: verification stopped, {left():.0f} s of budget left")
                all_ok = False
                break
            shape = shape_dict(s)
            try:
                ref, x, want, eager = problem(shape, dt, misaligned)
                m = kc.RawKernelModel(ref, src, cand.launch, SPEC.interface, cfg, dt, arch)
                y = m(x)
                torch.cuda.synchronize()
                res = check(y, want, eager, dt)
            except Exception as e:  # noqa: BLE001
                res = {"ok": False, "why": f"{type(e).__name__}: {str(e)[:2000]}"}
            res["shape"] = dict(shape, misaligned=misaligned)
            row["shapes"].append(res)
            all_ok &= res["ok"]
            tag = "ok" if res["ok"] else "FAIL"
            sh = "x".join(str(v) for v in shape.values()) + (" misaligned" if misaligned else "")
            if "why" in res:
                log(f"  {label} {sh}: FAIL {res['why']}")
            else:
                log(f"  {label} {sh}: {tag} max|err| {res['max_abs_err']:.2e} (eager {res['eager_max_abs_err']:.2e}), "
                    f"excess {res['max_excess']:.2e} vs atol {TOL[dt][0]:g}, max|y - eager| "
                    f"{res['max_abs_vs_eager']:.2e}" + ("" if res["ok"] else
                    f", {res['n_bad']} bad, first {res['first_bad']}, k {res['bad_k']}, ph {res['bad_ph']}, "
                    f"pw {res['bad_pw']}"))
        row["ok"] = all_ok
        if all_ok:
            ok_builds[str(cfg)] = (cand, src, cfg)
    return ok_builds


def main() -> int:
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    log(f"{torch.cuda.get_device_name()} {arch}; torch {torch.__version__}, triton {triton.__version__}, "
        f"cudnn.allow_tf32 {torch.backends.cudnn.allow_tf32}")
    shapes = [(s, False) for s in SPEC.verify_shapes] + [(s, False) for s in EXTRA]
    shapes += [((1, 16, 24, 6, 16), True), ((2, 64, 128, 31, 32), True), (TIMING, False)]
    v5_bad = 0
    for dt in SPEC.dtypes:
        dtype = getattr(torch, dt)
        log(f"\n==== {dt} ({'TF32 products' if dt == 'float32' else 'bf16 products'}, float32 accumulation)")
        good = {}
        for version in ("v5", "v4"):  # v4 verified in earlier sessions: two ragged shapes + the timing shape
            good[version] = verify_raw(version, dt, arch, shapes if version == "v5" else shapes[1:3] + shapes[-1:])
            if version == "v5":
                v5_bad += len(CANDS["v5"].configs()) - len(good["v5"])
        if left() < 30:
            log(f"no time left for timing ({left():.0f} s)")
            continue
        ref, x, _, _ = problem(TIMING, dt)
        times = {}
        with torch.no_grad():
            times["eager"] = bench(lambda: ref(x))
            log(f"{dt} eager {times['eager']:.4f} ms")
            for version in ("v5", "v4"):
                for key, (cand, src, cfg) in good[version].items():
                    m = kc.RawKernelModel(ref, src, cand.launch, SPEC.interface, cfg, dt, arch)
                    ms = bench(lambda: m(x))
                    times[f"{version} {key}"] = ms
                    log(f"{dt} {version} {key}: {ms:.4f} ms ({times['eager'] / ms:.2f}x eager)")
            if left() > 20:
                try:
                    comp = torch.compile(ref)
                    comp(x)
                    times["compile"] = bench(lambda: comp(x))
                    log(f"{dt} torch.compile {times['compile']:.4f} ms")
                except Exception as e:  # noqa: BLE001
                    log(f"{dt} torch.compile failed: {type(e).__name__}: {str(e)[:300]}")
            v3 = import_file(CANDS["v3"].file)
            for cfg in CANDS["v3"].configs():
                if left() < 25:
                    break
                try:
                    m3 = v3.ModelNew(TIMING["C_in"], TIMING["C_out"], **cfg).to("cuda", dtype)
                    m3.load_state_dict(ref.state_dict())
                    ms = bench(lambda: m3(x))
                    times[f"v3 {cfg}"] = ms
                    log(f"{dt} v3 {cfg}: {ms:.4f} ms")
                except Exception as e:  # noqa: BLE001 - e.g. OutOfResources on the largest tile
                    log(f"{dt} v3 {cfg}: {type(e).__name__}: {str(e)[:200]}")
        SUMMARY["timing"][dt] = times
    log("\n==== summary at the timing shape (median ms; best config of each version)")
    log("| dtype | eager | torch.compile | v3 | v4 | v5 (config) | v5 x eager | v5 x compile | target met |")
    log("|---|---|---|---|---|---|---|---|---|")
    for dt, times in SUMMARY["timing"].items():
        best = {}
        for v in ("v3", "v4", "v5"):
            cands = {k: ms for k, ms in times.items() if k.startswith(v + " ")}
            if cands:
                k = min(cands, key=cands.get)
                best[v] = (cands[k], k[3:])
        e, c = times.get("eager"), times.get("compile")
        v5 = best.get("v5")
        fx = lambda a: f"{a:.4f}" if a else "-"  # noqa: E731
        xe = e / v5[0] if v5 and e else None
        xc = c / v5[0] if v5 and c else None
        met = bool(xe and xc and xe >= 2.0 and xc >= 1.1)
        log(f"| {dt} | {fx(e)} | {fx(c)} | {fx(best.get('v3', (None,))[0])} | {fx(best.get('v4', (None,))[0])} | "
            f"{fx(v5[0]) if v5 else '-'} ({v5[1] if v5 else '-'}) | {xe or 0:.2f} | {xc or 0:.2f} | {met} |")
    log(f"\nv5 builds failing compile or verification: {v5_bad}; total {time.time() - T0:.0f} s")
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "conv_v5_probe.txt"), "w").write("\n".join(LINES) + "\n")
        json.dump(SUMMARY, open(os.path.join(out, "conv_v5_probe.json"), "w"), indent=1, default=str)
    return 1 if v5_bad else 0


if __name__ == "__main__":
    sys.exit(main())
