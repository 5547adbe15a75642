"""H200 probe of conv_relu_maxpool v6 (native CUDA, Hopper wgmma, sm_90a) beside eager,
torch.compile, v3 (Triton) and v5 (CUDA mma.sync), outside the harness, in one call of <= 150 s.

1. Verification, one child process per dtype (a sticky CUDA error such as an illegal address kills
   that child only; the parent restarts it on the configs not yet tried while time is left): every
   v6 config is NVRTC-built through kernelsynth/backends/cuda.py (launch.arch_specific -> sm_90a;
   a compile error prints NVRTC's log), registers / local (spill) bytes printed, then run on 14
   ragged shapes (N=1 H=W=2, odd C_in / C_out, C_out=257, W=33, two column tiles, a C_in tail,
   a 2050-wide row, N=70001 (a grid past 65535 per y/z), a misaligned input (element path), the
   timing shape) against a float64 reference of the same dtype-rounded weights and input and against
   eager. Per shape: max |err| and where (n, k, ph, pw), max (|err| - rtol |ref|) vs atol; on a
   failure the count of bad and of unwritten (NaN-poisoned) outputs, the bad k / ph / pw, and for
   the first failing shape a rebuild with V6_DESC_SWAP=1 (the descriptor's LBO and SBO exchanged)
   on the same shape: "ok" there means the stride fields are the other way round.
2. Timing at N=32, C_in=64, C_out=128, H=W=128, both dtypes, triton.testing.do_bench (median ms):
   eager, every verified v6 config, torch.compile, v5 (every config), v3 (session 11's best config
   per dtype, BENCHMARKS.md), then a table with x eager, x torch.compile, x v3, x v5 and whether
   issue 14 item 1's target (>= 1.1x torch.compile) is met.

Usage (repo root, GPU machine, after bench/device_env.sh):  timeout 170 python3 bench/conv_v6_probe.py
PROBE_BUDGET_S (default 150) bounds the whole run. With OUT set, writes $OUT/conv_v6_probe.txt and
$OUT/conv_v6_probe.json. Exit 1 when any v6 build fails to compile or verify.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback

T0 = time.time()
BUDGET_S = float(os.environ.get("PROBE_BUDGET_S", "150"))
VERIFY_END_S = 0.45 * BUDGET_S  # the verification children stop here; timing gets the rest
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 8, 17, 19), (3, 5, 7, 9, 6), (1, 16, 40, 15, 33), (1, 7, 257, 11, 33),
          (2, 64, 128, 31, 30), (1, 64, 128, 32, 32), (2, 24, 200, 33, 264), (3, 130, 33, 6, 40),
          (7, 379, 257, 7, 7), (1, 16, 16, 2, 2050), (70001, 3, 5, 4, 4)]
MISALIGNED = (2, 64, 128, 31, 32)
V3_BEST = {"float32": {"BLOCK_W": 64, "BLOCK_C": 32, "BLOCK_K": 128, "num_warps": 4, "num_stages": 3},
           "bfloat16": {"BLOCK_W": 64, "BLOCK_C": 64, "BLOCK_K": 128, "num_warps": 4, "num_stages": 3}}
LINES: list = []


def log(msg: str = "") -> None:
    print(msg, flush=True)
    LINES.append(msg)


def left() -> float:
    return BUDGET_S - (time.time() - T0)


def _setup():
    import torch  # noqa: F401

    sys.path.insert(0, os.getcwd())
    from kernelsynth.backends import cuda as kc
    from kernelsynth.loading import import_file
    from kernelsynth.spec import load_spec

    spec = load_spec("specs/conv_relu_maxpool/spec.yaml", task_folder=True)
    return kc, import_file, spec


def problem(REF, shape, dt, misaligned=False):
    """(model at dt, x at dt, float64 reference output, eager output at dt)."""
    import torch

    dtype = getattr(torch, dt)
    if not isinstance(shape, dict):  # SHAPES are (N, C_in, C_out, H, W) tuples; the reference takes dicts
        shape = dict(zip(("N", "C_in", "C_out", "H", "W"), shape))
    torch.manual_seed(0)
    ref = REF.Model(*REF.get_init_inputs(shape)).to("cuda", dtype).eval()
    g = torch.Generator(device="cuda").manual_seed(1)
    (x,) = REF.get_inputs(shape, dtype, "cuda", g)
    if misaligned:  # same values at a storage offset of one element: not 16-byte aligned
        buf = torch.empty(x.numel() + 1, dtype=dtype, device="cuda")
        buf[1:].copy_(x.reshape(-1))
        x = buf[1:].view(x.shape)
    ref64 = REF.Model(*REF.get_init_inputs(shape)).to("cuda", torch.float64)
    ref64.load_state_dict({k: v.double() for k, v in ref.state_dict().items()})
    with torch.no_grad():
        want = ref64(x.double())
        eager = ref(x)
    return ref, x, want, eager


def check(y, want, eager, atol, rtol):
    import torch

    if tuple(y.shape) != tuple(want.shape):
        return {"ok": False, "why": f"shape {tuple(y.shape)} != {tuple(want.shape)}"}
    yd = y.double()
    err = (yd - want).abs()
    excess = err - rtol * want.abs()
    bad = ~(excess <= atol)  # NaN counts as bad
    flat = int(torch.nan_to_num(err, nan=float("inf")).argmax().item())
    where = [int(i) for i in torch.unravel_index(torch.tensor(flat), err.shape)]
    out = {"ok": not bool(bad.any()), "max_abs_err": err.max().item(), "max_excess": excess.max().item(),
           "at (n,k,ph,pw)": where, "got": yd[tuple(where)].item(), "want": want[tuple(where)].item(),
           "eager_max_abs_err": (eager.double() - want).abs().max().item(),
           "max_abs_vs_eager": (yd - eager.double()).abs().max().item()}
    if bad.any():
        out["n_bad"] = int(bad.sum().item())
        out["n_total"] = y.numel()
        out["n_nan (unwritten or NaN)"] = int(torch.isnan(yd).sum().item())
        for name, dims in (("k", (0, 2, 3)), ("ph", (0, 1, 3)), ("pw", (0, 1, 2))):
            idx = bad.any(dim=dims).nonzero().flatten().tolist()
            out[f"bad_{name}"] = idx[:16] + (["...", len(idx)] if len(idx) > 16 else [])
    return out


def run_model(kc, ref, src, cand, spec, cfg, dt, arch, x):
    import torch

    m = kc.RawKernelModel(ref, src, cand.launch, spec.interface, cfg, dt, arch)
    n_out = x.shape[0] * ref.conv.out_channels * (x.shape[2] // 2) * (x.shape[3] // 2) if hasattr(ref, "conv") else 0
    if n_out:  # poison the allocator's next block of that size: unwritten outputs read NaN
        torch.full((n_out,), float("nan"), dtype=x.dtype, device=x.device)
    y = m(x)
    torch.cuda.synchronize()
    return m, y


def child(dt: str, cfgs: list) -> int:
    """Verify v6 configs `cfgs` in dtype `dt`; prints '@@ {json}' per config for the parent."""
    import torch

    kc, import_file, spec = _setup()
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cand = next(c for c in spec.candidates if c.version == "v6")
    src = open(cand.file).read()
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    atol, rtol = float(spec.tolerance[dt]["atol"]), float(spec.tolerance[dt]["rtol"])
    timing = tuple(spec.timing_shape[k] for k in ("N", "C_in", "C_out", "H", "W"))
    shapes = [(s, False) for s in SHAPES] + [(MISALIGNED, True), (timing, False)]
    cache = {}
    for cfg in cfgs:
        label = f"v6 {dt} {cfg}"
        row = {"dtype": dt, "config": cfg, "shapes": []}
        try:
            ref, x, _, _ = cache.setdefault((shapes[0][0], False), problem(REF, shapes[0][0], dt))
            t = time.time()
            m = kc.RawKernelModel(ref, src, cand.launch, spec.interface, cfg, dt, arch)
            st = m.compile_stats()
            row["stats"] = {k: st[k] for k in ("n_regs", "local_bytes", "shared_bytes", "compile_s")}
            print(f"{label}: built for {m.arch} in {time.time() - t:.1f} s, regs {st['n_regs']}, local bytes "
                  f"{st['local_bytes']} (spills), static smem {st['shared_bytes']}", flush=True)
        except Exception as e:  # noqa: BLE001 - NVRTC's log is in the message
            row.update(ok=False, error=f"{type(e).__name__}: {str(e)[-6000:]}")
            print(f"{label}: BUILD FAILED {row['error']}", flush=True)
            print("@@ " + json.dumps(row, default=str), flush=True)
            continue
        ok, diagnosed = True, False
        for s, mis in shapes:
            if time.time() - T0 > VERIFY_END_S:
                print(f"  {label}: verification stopped by the budget", flush=True)
                ok = False
                break
            sh = "x".join(map(str, s)) + (" misaligned" if mis else "")
            try:
                if (s, mis) not in cache:
                    if len(cache) > 6:
                        cache.clear()
                    cache[(s, mis)] = problem(REF, s, dt, mis)
                ref, x, want, eager = cache[(s, mis)]
                _, y = run_model(kc, ref, src, cand, spec, cfg, dt, arch, x)
                res = check(y, want, eager, atol, rtol)
            except Exception as e:  # noqa: BLE001 - a CUDA error name is in the message
                res = {"ok": False, "why": f"{type(e).__name__}: {str(e)[:1500]}",
                       "trace": traceback.format_exc()[-1500:]}
            res["shape"] = sh
            row["shapes"].append(res)
            ok &= res["ok"]
            if "why" in res:
                print(f"  {label} {sh}: FAIL {res['why']}\n{res['trace']}", flush=True)
                row["ok"] = False
                print("@@ " + json.dumps(row, default=str), flush=True)
                return 3  # the context may be unusable: the parent restarts on the remaining configs
            print(f"  {label} {sh}: {'ok' if res['ok'] else 'FAIL'} max|err| {res['max_abs_err']:.2e} at "
                  f"{res['at (n,k,ph,pw)']} (got {res['got']:.5g}, want {res['want']:.5g}; eager's max|err| "
                  f"{res['eager_max_abs_err']:.2e}), excess {res['max_excess']:.2e} vs atol {atol:g}, max|y - eager| "
                  f"{res['max_abs_vs_eager']:.2e}" + ("" if res["ok"] else
                  f"; {res['n_bad']}/{res['n_total']} bad, {res['n_nan (unwritten or NaN)']} NaN, k {res['bad_k']}, "
                  f"ph {res['bad_ph']}, pw {res['bad_pw']}"), flush=True)
            if not res["ok"] and not diagnosed:
                diagnosed = True
                try:
                    _, y2 = run_model(kc, ref, src, cand, spec, dict(cfg, V6_DESC_SWAP=1), dt, arch, x)
                    r2 = check(y2, want, eager, atol, rtol)
                    row["desc_swap_diagnosis"] = r2
                    print(f"  {label} {sh}: DIAGNOSIS with V6_DESC_SWAP=1 (LBO/SBO exchanged): "
                          f"{'ok' if r2['ok'] else 'FAIL'} max|err| {r2['max_abs_err']:.2e}", flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"  {label} {sh}: DIAGNOSIS build/run failed: {type(e).__name__}: {str(e)[:800]}", flush=True)
        row["ok"] = ok
        print("@@ " + json.dumps(row, default=str), flush=True)
    return 0


def verify_all(spec) -> dict:
    """Run one child per dtype (restarted on the configs left after a crash); {dtype: [ok configs]}."""
    cand = next(c for c in spec.candidates if c.version == "v6")
    todo = {dt: [dict(c) for c in cand.configs()] for dt in spec.dtypes}
    rows, good = [], {dt: [] for dt in spec.dtypes}
    while any(todo.values()) and time.time() - T0 < VERIFY_END_S - 10:
        procs = {dt: subprocess.Popen([sys.executable, __file__, "--child", dt, json.dumps(cfgs)],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=dict(os.environ, V6_PROBE_T0=str(T0)))
                 for dt, cfgs in todo.items() if cfgs}
        for dt, p in procs.items():
            try:
                out, _ = p.communicate(timeout=max(5.0, VERIFY_END_S + 15 - (time.time() - T0)))
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
                out += f"\n(child {dt} killed at the verification deadline)"
            tried = []
            for line in out.splitlines():
                if line.startswith("@@ "):
                    r = json.loads(line[3:])
                    rows.append(r)
                    tried.append(r["config"])
                    if r.get("ok"):
                        good[dt].append(r["config"])
                else:
                    log(line)
            if p.returncode not in (0, 3) and not tried and todo[dt]:
                log(f"child {dt} exited {p.returncode} before finishing a config: {todo[dt][0]} marked failed")
                rows.append({"dtype": dt, "config": todo[dt][0], "ok": False, "error": f"child exit {p.returncode}"})
                tried.append(todo[dt][0])
            todo[dt] = [c for c in todo[dt] if c not in tried]
    for dt, cfgs in todo.items():
        for c in cfgs:
            rows.append({"dtype": dt, "config": c, "ok": False, "error": "not verified (budget)"})
            log(f"v6 {dt} {c}: not verified (budget)")
    return {"rows": rows, "good": good}


def bench(fn) -> float:
    import triton

    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main() -> int:
    import torch
    import triton

    kc, import_file, spec = _setup()
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    log(f"{torch.cuda.get_device_name()} {arch}; torch {torch.__version__}, triton {triton.__version__}, "
        f"cudnn.allow_tf32 {torch.backends.cudnn.allow_tf32}; budget {BUDGET_S:.0f} s")
    ver = verify_all(spec)
    n_bad = sum(1 for r in ver["rows"] if not r.get("ok"))
    log(f"\nv6 verification: {len(ver['rows']) - n_bad} of {len(ver['rows'])} builds ok "
        f"({time.time() - T0:.0f} s)")
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cands = {c.version: c for c in spec.candidates}
    timing = dict(spec.timing_shape)
    times: dict = {}
    for i, dt in enumerate(spec.dtypes):
        deadline = BUDGET_S - (time.time() - T0)  # this dtype's share of what is left
        share = deadline / (len(spec.dtypes) - i)
        t_end = time.time() + share - 3
        T = times.setdefault(dt, {})
        log(f"\n==== timing {dt} ({share:.0f} s)")
        try:
            torch.manual_seed(0)
            ref = REF.Model(*REF.get_init_inputs(timing)).to("cuda", getattr(torch, dt)).eval()
            (x,) = REF.get_inputs(timing, getattr(torch, dt), "cuda", torch.Generator(device="cuda").manual_seed(1))
        except Exception as e:  # noqa: BLE001
            log(f"{dt}: setup failed: {e!r}")
            continue

        def timed(name, make):
            if time.time() > t_end:
                log(f"{dt} {name}: skipped (time)")
                return
            try:
                fn = make()
                with torch.no_grad():
                    fn(x)
                    torch.cuda.synchronize()
                    T[name] = bench(lambda: fn(x))
                log(f"{dt} {name}: {T[name]:.4f} ms")
            except Exception as e:  # noqa: BLE001
                log(f"{dt} {name}: FAILED {type(e).__name__}: {str(e)[:600]}")

        timed("eager", lambda: ref)
        for cfg in ver["good"][dt]:
            timed(f"v6 {cfg}", lambda cfg=cfg: kc.RawKernelModel(ref, open(cands["v6"].file).read(), cands["v6"].launch,
                                                                 spec.interface, cfg, dt, arch))
        timed("compile", lambda: torch.compile(ref))
        for cfg in cands["v5"].configs():
            timed(f"v5 {cfg}", lambda cfg=cfg: kc.RawKernelModel(ref, open(cands["v5"].file).read(), cands["v5"].launch,
                                                                 spec.interface, cfg, dt, arch))

        def v3():
            m3 = import_file(cands["v3"].file).ModelNew(timing["C_in"], timing["C_out"], **V3_BEST[dt])
            m3 = m3.to("cuda", getattr(torch, dt))
            m3.load_state_dict(ref.state_dict())
            return m3

        timed(f"v3 {V3_BEST[dt]}", v3)
    log("\n==== timing shape N=32 C_in=64 C_out=128 H=W=128 (median ms; v3: session 11's best config; "
        "v5: best of its configs)")
    log("| dtype | eager | torch.compile | v3 | v5 | v6 config | v6 ms | x eager | x compile | x v3 | x v5 | >= 1.1x compile |")
    log("|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = {}
    for dt, T in times.items():
        e, c = T.get("eager"), T.get("compile")
        v3 = min((ms for k, ms in T.items() if k.startswith("v3 ")), default=None)
        v5s = {k: ms for k, ms in T.items() if k.startswith("v5 ")}
        v5 = min(v5s.values()) if v5s else None
        f = lambda a: f"{a:.4f}" if a else "-"  # noqa: E731
        r = lambda a, b: f"{a / b:.2f}" if a and b else "-"  # noqa: E731
        for k, ms in T.items():
            if k.startswith("v6 "):
                met = bool(c and c / ms >= 1.1)
                log(f"| {dt} | {f(e)} | {f(c)} | {f(v3)} | {f(v5)} | {k[3:]} | {ms:.4f} | {r(e, ms)} | {r(c, ms)} | "
                    f"{r(v3, ms)} | {r(v5, ms)} | {met if c else '- (no compile time)'} |")
        summary[dt] = {"eager": e, "compile": c, "v3": v3, "v5": v5,
                       "v5_best": min(v5s, key=v5s.get) if v5s else None,
                       "v6": {k: ms for k, ms in T.items() if k.startswith("v6 ")}}
    log(f"\nv6 builds failing compile or verification: {n_bad}; total {time.time() - T0:.0f} s")
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "conv_v6_probe.txt"), "w").write("\n".join(LINES) + "\n")
        json.dump({"verification": ver["rows"], "timing": times, "summary": summary},
                  open(os.path.join(out, "conv_v6_probe.json"), "w"), indent=1, default=str)
    return 1 if n_bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        T0 = float(os.environ.get("V6_PROBE_T0", T0))
        sys.exit(child(sys.argv[2], json.loads(sys.argv[3])))
    sys.exit(main())
