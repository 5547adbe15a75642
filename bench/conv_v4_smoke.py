"""GPU smoke check of conv_relu_maxpool v4 outside the harness (bench/h200_tc.sh runs it first, so a
failure shows its own error instead of only a rejected observation): every dtype x config is
compiled by NVRTC through kernelsynth/backends/cuda.py, compared with a float64 reference on the
spec's verify shapes and the timing shape, and timed at the timing shape (triton do_bench median,
beside eager and cuDNN's convolution alone). Prints one line per dtype x config; exits 1 when
any max |error| exceeds the spec's tolerance (atol + rtol * |ref|).

Usage: python3 bench/conv_v4_smoke.py
"""

from __future__ import annotations

import os
import sys

import torch
import triton

sys.path.insert(0, os.getcwd())
from kernelsynth.backends import cuda as kc  # noqa: E402
from kernelsynth.loading import import_file  # noqa: E402
from kernelsynth.spec import load_spec  # noqa: E402

SPEC = load_spec("specs/conv_relu_maxpool/spec.yaml", task_folder=True)
REF = import_file("specs/conv_relu_maxpool/reference.py")
V4 = next(c for c in SPEC.candidates if c.version == "v4")
TOL = {"float32": (5e-3, 5e-3), "bfloat16": (1e-2, 1.6e-2)}


def main() -> int:
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    src = open(V4.file).read()
    shapes = list(SPEC.verify_shapes) + [SPEC.timing_shape]
    bad = 0
    for dt in SPEC.dtypes:
        dtype = getattr(torch, dt)
        atol, rtol = TOL[dt]
        for cfg in V4.configs():
            worst, ms, stats = 0.0, None, {}
            try:
                for shape in shapes:
                    shape = dict(shape)
                    torch.manual_seed(0)
                    ref = REF.Model(*REF.get_init_inputs(shape)).to("cuda", dtype).eval()
                    g = torch.Generator(device="cuda").manual_seed(1)
                    (x,) = REF.get_inputs(shape, dtype, "cuda", g)
                    model = kc.RawKernelModel(ref, src, V4.launch, SPEC.interface, cfg, dt, arch)
                    y = model(x)
                    ref64 = REF.Model(*REF.get_init_inputs(shape)).to("cuda", torch.float64)
                    ref64.load_state_dict({k: v.double() for k, v in ref.state_dict().items()})
                    want = ref64(x.double())
                    err = ((y.double() - want).abs() - rtol * want.abs()).max().item()
                    worst = max(worst, err)
                    if shape == dict(SPEC.timing_shape):
                        ms = triton.testing.do_bench(lambda: model(x), warmup=25, rep=200, return_mode="median")
                        stats = model.compile_stats()
            except Exception as e:  # noqa: BLE001 - report and go on to the next config
                print(f"{dt:9s} {cfg}: ERROR {type(e).__name__}: {str(e)[:1500]}")
                bad += 1
                continue
            ok = worst <= atol
            bad += not ok
            print(f"{dt:9s} {cfg}: max(|err| - rtol*|ref|) {worst:.2e} ({'ok' if ok else 'FAIL'} <= {atol:g}), "
                  f"timing shape {ms:.4f} ms, regs {stats.get('n_regs')}, spills {stats.get('n_spills')}")
        shape = dict(SPEC.timing_shape)
        torch.manual_seed(0)
        ref = REF.Model(*REF.get_init_inputs(shape)).to("cuda", dtype).eval()
        (x,) = REF.get_inputs(shape, dtype, "cuda", torch.Generator(device="cuda").manual_seed(1))
        with torch.no_grad():
            e_ms = triton.testing.do_bench(lambda: ref(x), warmup=25, rep=200, return_mode="median")
            c_ms = triton.testing.do_bench(lambda: ref.conv(x), warmup=25, rep=200, return_mode="median")
        print(f"{dt:9s} eager {e_ms:.4f} ms, cuDNN convolution alone {c_ms:.4f} ms")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
