"""H200 probe of conv_relu_maxpool v8 (native CUDA, Hopper wgmma fed by a warp-specialized pipeline of bulk
asynchronous copies and mbarriers, weights as register A, persistent blocks; sm_90a) beside eager,
torch.compile, v3 (Triton) and v6, outside the harness, in one call (PROBE_BUDGET_S, default 330).
Adapted from bench/conv_v7_probe.py (same shapes, checks, timing and ncu pass).

v8 was written without a GPU (its protocol and index math checked by tests/test_conv_v8_emulation.py);
a protocol bug on the device would hang the kernel, so every verification runs in a child process
with a deadline (killed at the verification deadline) and the kernel's own watchdog (V8_WATCHDOG: an
mbarrier wait that fails 2^26 times gives up, so the launch ends with wrong outputs instead of hanging).

1. Verification, one child process per dtype (a sticky CUDA error kills that child only; the parent
   restarts it on the configs not yet tried while time is left): every v8 config is NVRTC-built through
   kernelsynth/backends/cuda.py (launch.arch_specific -> sm_90a), registers / local (spill) bytes
   printed, then run against a float64 reference of the same dtype-rounded weights and input (and
   against eager) on the spec's six verify shapes and the ragged ones of v7's probe (N=1 H=W=2, odd
   C_in: the weights' element path, C_out=257, W=33 / 70 / 264 / 2050: the pixels' element path or
   several column tiles, a C_in tail, N=70001, many tiles per block, a misaligned input: the pixels'
   element path, misaligned weights: the weights' element path) and the timing shape. On the first
   failing shape of a config: the shape once per tap with the other taps' weights zeroed (which taps
   read wrong).
2. Timing at N=32, C_in=64, C_out=128, H=W=128, both dtypes, triton.testing.do_bench (median ms, L2
   flushed): eager, every verified v8 config, torch.compile, v6 and v3 (their best configs), then a table
   with x eager, x torch.compile, x v3, x v6 and whether issue 14's target (>= 1.1x torch.compile) is met.
3. ncu (if found and time is left) on the fastest v8 config per dtype, one launch at the timing shape:
   kernelsynth.profiling's metrics plus shared-memory wavefronts / bank conflicts and instructions.

Usage (repo root, GPU machine, after bench/device_env.sh):  timeout 390 python3 bench/conv_v8_probe.py
V8_PROBE_VERSION=v9 probes v9 instead (same interface and launch shape; its rows are still labelled v8).
(bench/h200_v8.sh runs it). With OUT set, writes $OUT/conv_v8_probe.txt, $OUT/conv_v8_probe.json and
$OUT/conv_v8_ncu.txt. Exit 1 when any v8 build fails to compile or verify.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

T0 = time.time()
BUDGET_S = float(os.environ.get("PROBE_BUDGET_S", "330"))
VERIFY_END_S = 0.40 * BUDGET_S   # the verification children stop here
TIMING_END_S = 0.82 * BUDGET_S   # timing stops here; ncu gets the rest
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 8, 17, 19), (3, 5, 7, 9, 6), (1, 16, 40, 15, 33), (1, 7, 257, 11, 33),
          (2, 64, 128, 31, 30), (1, 64, 128, 32, 32), (4, 20, 70, 13, 70), (1, 12, 130, 30, 9),
          (2, 24, 200, 33, 264), (3, 130, 33, 6, 40), (7, 379, 257, 7, 7), (1, 16, 16, 2, 2050),
          (16, 64, 128, 64, 64), (70001, 3, 5, 4, 4)]
MISALIGNED_X = (2, 64, 128, 31, 32)
MISALIGNED_W = (2, 32, 96, 15, 48)
V3_BEST = {"float32": {"BLOCK_W": 64, "BLOCK_C": 32, "BLOCK_K": 128, "num_warps": 4, "num_stages": 3},
           "bfloat16": {"BLOCK_W": 64, "BLOCK_C": 64, "BLOCK_K": 128, "num_warps": 4, "num_stages": 3}}
V6_BEST = {"float32": {"BN": 64, "BW": 128, "STAGES": 2}, "bfloat16": {"BN": 64, "BW": 128, "STAGES": 3}}
NCU_EXTRA = ["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
             "smsp__inst_executed.sum", "sm__cycles_elapsed.avg", "smsp__inst_executed_op_shared_st.sum",
             "smsp__inst_executed_op_global_ld.sum"]
LINES: list = []
# the version probed: v8 (default) or a later one with v8's interface (V8_PROBE_VERSION=v9); its rows keep
# the label "v8" in this script's tables and JSON
VERSION = os.environ.get("V8_PROBE_VERSION", "v8")


def log(msg: str = "") -> None:
    print(msg, flush=True)
    LINES.append(msg)


def _setup():
    import torch  # noqa: F401

    sys.path.insert(0, os.getcwd())
    from kernelsynth.backends import cuda as kc
    from kernelsynth.loading import import_file
    from kernelsynth.spec import load_spec

    spec = load_spec("specs/conv_relu_maxpool/spec.yaml", task_folder=True)
    return kc, import_file, spec


def misalign(t):
    """The same values at a storage offset of one element: not 16-byte (nor 8-byte) aligned."""
    import torch

    buf = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    buf[1:].copy_(t.reshape(-1))
    return buf[1:].view(t.shape)


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
    if misaligned:
        x = misalign(x)
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


def build(kc, ref, src, cand, spec, cfg, dt, arch, w_misaligned=False):
    m = kc.RawKernelModel(ref, src, cand.launch, spec.interface, cfg, dt, arch)
    if w_misaligned:  # the launch reads m.params: the weights at an odd element offset
        m.params["conv.weight"] = misalign(m.params["conv.weight"])
    return m


def run_model(m, ref, x):
    import torch

    n_out = x.shape[0] * ref.conv.out_channels * (x.shape[2] // 2) * (x.shape[3] // 2)
    torch.full((n_out,), float("nan"), dtype=x.dtype, device=x.device)  # unwritten outputs read NaN
    y = m(x)
    torch.cuda.synchronize()
    return y


def tap_diagnosis(kc, REF, shape, dt, mis, src, cand, spec, cfg, arch, atol, rtol, label):
    """The failing shape once per tap (kh, kw) with every other tap's weights zeroed: which taps'
    operands are read wrong (v8: the pixels' descriptor of tap (kh, kw) starts at staged pixel
    (r + kh) * 132 + kw + 1; the weights' fragments of tap s at element offset s of each raw row)."""
    import torch

    out = {}
    for tap in range(9):
        ref, x, _, _ = problem(REF, shape, dt, mis == "x")
        with torch.no_grad():
            mask = torch.zeros(3, 3, dtype=ref.conv.weight.dtype, device=ref.conv.weight.device)
            mask[tap // 3, tap % 3] = 1
            ref.conv.weight.mul_(mask)
            ref64 = REF.Model(*REF.get_init_inputs(dict(zip(("N", "C_in", "C_out", "H", "W"), shape))))
            ref64 = ref64.to("cuda", torch.float64)
            ref64.load_state_dict({k: v.double() for k, v in ref.state_dict().items()})
            want, eager = ref64(x.double()), ref(x)
        m = build(kc, ref, src, cand, spec, cfg, dt, arch, w_misaligned=mis == "w")
        r = check(run_model(m, ref, x), want, eager, atol, rtol)
        out[f"{tap // 3},{tap % 3}"] = {k: r.get(k) for k in ("ok", "max_abs_err", "n_bad", "bad_ph", "bad_pw")}
        print(f"{label}: DIAGNOSIS tap (kh, kw) = ({tap // 3}, {tap % 3}) alone: {'ok' if r['ok'] else 'FAIL'} "
              f"max|err| {r['max_abs_err']:.2e}" + ("" if r["ok"] else f", {r['n_bad']} bad, ph {r['bad_ph']}, "
              f"pw {r['bad_pw']}"), flush=True)
    return out


def child(dt: str, cfgs: list) -> int:
    """Verify v8 configs `cfgs` in dtype `dt`; prints '@@ {json}' per config for the parent."""
    import torch

    kc, import_file, spec = _setup()
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cand = next(c for c in spec.candidates if c.version == VERSION)
    src = open(cand.file).read()
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    atol, rtol = float(spec.tolerance[dt]["atol"]), float(spec.tolerance[dt]["rtol"])
    timing = tuple(spec.timing_shape[k] for k in ("N", "C_in", "C_out", "H", "W"))
    verify = [tuple(s[k] for k in ("N", "C_in", "C_out", "H", "W")) for s in spec.verify_shapes]
    shapes = [(s, "") for s in dict.fromkeys(verify + SHAPES)]
    shapes += [(MISALIGNED_X, "x"), (MISALIGNED_W, "w"), (timing, "")]
    cache = {}
    for cfg in cfgs:
        label = f"v8 {dt} {cfg}"
        row = {"dtype": dt, "config": cfg, "shapes": []}
        try:
            ref, x, _, _ = cache.setdefault((shapes[0][0], ""), problem(REF, shapes[0][0], dt))
            t = time.time()
            m = build(kc, ref, src, cand, spec, cfg, dt, arch)
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
            if time.time() - T0 > VERIFY_END_S:  # what was tried passed: still timed, marked incomplete
                print(f"  {label}: verification stopped by the budget after {len(row['shapes'])} of "
                      f"{len(shapes)} shapes", flush=True)
                row["incomplete"] = f"{len(row['shapes'])} of {len(shapes)} shapes"
                break
            sh = "x".join(map(str, s)) + (f" misaligned {mis}" if mis else "")
            try:
                key = (s, mis == "x")
                if key not in cache:  # kept for the next configs (a few GB at most on a 139 GB GPU)
                    cache[key] = problem(REF, s, dt, mis == "x")
                ref, x, want, eager = cache[key]
                m = build(kc, ref, src, cand, spec, cfg, dt, arch, w_misaligned=mis == "w")
                y = run_model(m, ref, x)
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
                    row["diagnosis per tap"] = tap_diagnosis(kc, REF, s, dt, mis, src, cand, spec, cfg, arch, atol,
                                                             rtol, f"  {label} {sh}")
                except Exception as e:  # noqa: BLE001
                    print(f"  {label} {sh}: DIAGNOSIS per tap failed: {type(e).__name__}: {str(e)[:800]}", flush=True)
        row["ok"] = ok
        print("@@ " + json.dumps(row, default=str), flush=True)
    return 0


def verify_all(spec) -> dict:
    """Run one child per dtype (restarted on the configs left after a crash); {dtype: [ok configs]}."""
    cand = next(c for c in spec.candidates if c.version == VERSION)
    todo = {dt: [dict(c) for c in cand.configs()] for dt in spec.dtypes}
    rows, good = [], {dt: [] for dt in spec.dtypes}
    while any(todo.values()) and time.time() - T0 < VERIFY_END_S - 10:
        procs = {dt: subprocess.Popen([sys.executable, __file__, "--child", dt, json.dumps(cfgs)],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=dict(os.environ, V8_PROBE_T0=str(T0)))
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
            log(f"v8 {dt} {c}: not verified (budget)")
    return {"rows": rows, "good": good}


def bench(fn) -> float:
    import triton

    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def ncu_child(dt: str, cfg: dict) -> int:
    """One v8 launch at the timing shape between cudaProfilerStart / Stop (for ncu --profile-from-start off)."""
    import torch

    kc, import_file, spec = _setup()
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cand = next(c for c in spec.candidates if c.version == VERSION)
    cap = torch.cuda.get_device_capability()
    timing = dict(spec.timing_shape)
    torch.manual_seed(0)
    ref = REF.Model(*REF.get_init_inputs(timing)).to("cuda", getattr(torch, dt)).eval()
    (x,) = REF.get_inputs(timing, getattr(torch, dt), "cuda", torch.Generator(device="cuda").manual_seed(1))
    m = build(kc, ref, open(cand.file).read(), cand, spec, cfg, dt, f"sm_{cap[0]}{cap[1]}")
    m(x)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    m(x)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


def sanitize_child(dt: str) -> int:
    """Every v8 config on three small ragged shapes (one with misaligned weights), for
    compute-sanitizer memcheck: an out-of-bounds global or shared access is reported there even
    when the output happens to be right."""
    import torch

    kc, import_file, spec = _setup()
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cand = next(c for c in spec.candidates if c.version == VERSION)
    cap = torch.cuda.get_device_capability()
    src = open(cand.file).read()
    atol, rtol = float(spec.tolerance[dt]["atol"]), float(spec.tolerance[dt]["rtol"])
    for cfg in cand.configs():
        for s, wmis in (((2, 3, 7, 5, 7), False), ((1, 20, 70, 13, 70), True), ((3, 130, 33, 6, 40), False)):
            ref, x, want, eager = problem(REF, s, dt)
            m = build(kc, ref, src, cand, spec, cfg, dt, f"sm_{cap[0]}{cap[1]}", w_misaligned=wmis)
            res = check(run_model(m, ref, x), want, eager, atol, rtol)
            print(f"sanitize {dt} {cfg} {s}{' w misaligned' if wmis else ''}: {'ok' if res['ok'] else 'FAIL'} "
                  f"max|err| {res.get('max_abs_err')}", flush=True)
    return 0


def ncu_pass(best: dict) -> str:
    """ncu on each dtype's fastest v8 config; returns the text written to conv_v8_ncu.txt."""
    from kernelsynth.profiling import METRICS, NCU_PLACES

    ncu = shutil.which("ncu") or next((p for pat in NCU_PLACES for p in sorted(glob.glob(pat))), None)
    if not ncu:
        return "ncu: not found\n"
    text = []
    for dt, cfg in best.items():
        left = BUDGET_S - (time.time() - T0) - 5
        if left < 20:
            text.append(f"{dt} {cfg}: ncu skipped (time)")
            continue
        cmd = [ncu, "--profile-from-start", "off", "--target-processes", "all", "--csv", "--page", "raw",
               "--print-units", "base", "--metrics", ",".join(list(METRICS) + NCU_EXTRA),
               sys.executable, __file__, "--ncu-child", dt, json.dumps(cfg)]
        t = time.time()
        out = ""
        for attempt in range(2):  # the second time without the extra metrics, should ncu refuse one
            left = BUDGET_S - (time.time() - T0) - 5
            if left < 15:
                out += "\nncu: no time left"
                break
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=left)
                out += r.stdout + ("\n" + r.stderr[-3000:] if r.returncode else "")
                if r.returncode == 0 and sum(ln.startswith('"') for ln in r.stdout.splitlines()) >= 3:
                    break
            except subprocess.TimeoutExpired:
                out += "\nncu timed out"
                break
            cmd[cmd.index("--metrics") + 1] = ",".join(METRICS)
        text.append(f"==== ncu {dt} {cfg} ({time.time() - t:.0f} s)\n{out}")
        rows = [ln for ln in out.splitlines() if ln.startswith('"')]
        if len(rows) >= 3:  # header, units, values: print the metrics as name = value
            import csv

            hdr, _, *vals = list(csv.reader(rows))
            for v in vals[-1:]:
                for name, val in zip(hdr, v):
                    if any(k in name for k in ("pct", "ratio", "registers", "duration", "sum", "cycles")):
                        log(f"  ncu {dt}: {name} = {val}")
    return "\n".join(text) + "\n"


def main() -> int:
    import torch
    import triton

    kc, import_file, spec = _setup()
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    log(f"{torch.cuda.get_device_name()} {arch}, {torch.cuda.get_device_properties(0).multi_processor_count} SMs; "
        f"torch {torch.__version__}, triton {triton.__version__}, cudnn.allow_tf32 {torch.backends.cudnn.allow_tf32}; "
        f"budget {BUDGET_S:.0f} s")
    ver = verify_all(spec)
    n_bad = sum(1 for r in ver["rows"] if not r.get("ok"))
    log(f"\nv8 verification: {len(ver['rows']) - n_bad} of {len(ver['rows'])} builds ok ({time.time() - T0:.0f} s)")
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cands = {c.version: c for c in spec.candidates}
    timing = dict(spec.timing_shape)
    times: dict = {}
    for i, dt in enumerate(spec.dtypes):
        share = (TIMING_END_S - (time.time() - T0)) / (len(spec.dtypes) - i)
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
            timed(f"v8 {json.dumps(cfg)}", lambda cfg=cfg: build(kc, ref, open(cands[VERSION].file).read(), cands[VERSION],
                                                                spec, cfg, dt, arch))
        timed("compile", lambda: torch.compile(ref))
        timed(f"v6 {json.dumps(V6_BEST[dt])}", lambda: build(kc, ref, open(cands["v6"].file).read(), cands["v6"], spec,
                                                             V6_BEST[dt], dt, arch))

        def v3():
            m3 = import_file(cands["v3"].file).ModelNew(timing["C_in"], timing["C_out"], **V3_BEST[dt])
            m3 = m3.to("cuda", getattr(torch, dt))
            m3.load_state_dict(ref.state_dict())
            return m3

        timed(f"v3 {json.dumps(V3_BEST[dt])}", v3)
    flops = 2 * 32 * 128 * 128 * 128 * 64 * 9
    log("\n==== timing shape N=32 C_in=64 C_out=128 H=W=128 (do_bench median ms, L2 flushed; v3 and v6: their "
        "best configs of sessions 11 / 12)")
    log("| dtype | eager | torch.compile | v3 | v6 | v8 config | v8 ms | TFLOP/s | x eager | x compile | x v3 | x v6 "
        "| >= 1.1x compile |")
    log("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary, best = {}, {}
    for dt, T in times.items():
        e, c = T.get("eager"), T.get("compile")
        v3 = min((ms for k, ms in T.items() if k.startswith("v3 ")), default=None)
        v6 = min((ms for k, ms in T.items() if k.startswith("v6 ")), default=None)
        f = lambda a: f"{a:.4f}" if a else "-"  # noqa: E731
        r = lambda a, b: f"{a / b:.2f}" if a and b else "-"  # noqa: E731
        v8s = {k: ms for k, ms in T.items() if k.startswith("v8 ")}
        for k, ms in v8s.items():
            met = bool(c and c / ms >= 1.1)
            log(f"| {dt} | {f(e)} | {f(c)} | {f(v3)} | {f(v6)} | {k[3:]} | {ms:.4f} | {flops / ms / 1e9:.0f} | "
                f"{r(e, ms)} | {r(c, ms)} | {r(v3, ms)} | {r(v6, ms)} | {met if c else '- (no compile time)'} |")
        if v8s:
            best[dt] = json.loads(min(v8s, key=v8s.get)[3:])
        summary[dt] = {"eager": e, "compile": c, "v3": v3, "v6": v6, "v8": v8s, "v8_best": best.get(dt)}
    ncu_text = ncu_pass(best) if best else "no verified v8 config to profile\n"
    log(f"\nv8 builds failing compile or verification: {n_bad}; total {time.time() - T0:.0f} s")
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "conv_v8_probe.txt"), "w").write("\n".join(LINES) + "\n")
        open(os.path.join(out, "conv_v8_ncu.txt"), "w").write(ncu_text)
        json.dump({"verification": ver["rows"], "timing": times, "summary": summary},
                  open(os.path.join(out, "conv_v8_probe.json"), "w"), indent=1, default=str)
    return 1 if n_bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        T0 = float(os.environ.get("V8_PROBE_T0", T0))
        sys.exit(child(sys.argv[2], json.loads(sys.argv[3])))
    if len(sys.argv) >= 3 and sys.argv[1] == "--sanitize-child":
        sys.exit(sanitize_child(sys.argv[2]))
    if len(sys.argv) >= 4 and sys.argv[1] == "--ncu-child":
        sys.exit(ncu_child(sys.argv[2], json.loads(sys.argv[3])))
    sys.exit(main())
