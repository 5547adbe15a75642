"""Where conv_relu_maxpool v8's time goes: timing-only variants of its producer, outside the harness.

Session 21's ncu on the H200 put v8 (BN=128) at a 31 % busy tensor pipe with about the same time per
chunk in float32 (8 chunks of 8 channels per tile) as in bfloat16 (4 chunks of 16): a latency chain per
chunk, not the tensor pipe, sets its speed. This script times v8 beside variants that each drop one
piece of the producer's per-chunk work, so the difference says what that piece costs:

- ``base``: the spec's kernel (BN=128);
- ``weights_once``: the weight rows are bulk-copied only on a stage's first use (later chunks read
  stale weights: wrong outputs, timing only);
- ``pixels_once``: the same for the raw pixel tile;
- ``no_transpose``: the producer skips the raw-to-K-major pass (the consumers read whatever is there);
- ``copies_once``: weights_once + pixels_once;
- ``tensor_only``: copies_once + no_transpose, the consumers' wgmmas fed by an idle producer: the
  ceiling this pipeline shape could reach.

Every variant is the spec's source with one text edit, asserted to apply. Only ``base`` is checked
against eager (the others are wrong on purpose). Timing: triton.testing.do_bench median ms, L2 flushed,
at the spec's timing shape, each dtype; eager and torch.compile beside them.

Usage (repo root, GPU machine, after bench/device_env.sh): timeout 200 python3 bench/v8_experiments.py
Writes $OUT/v8_experiments.txt when OUT is set.
"""

from __future__ import annotations

import os
import sys
import time

import torch
import triton

sys.path.insert(0, os.getcwd())
from kernelsynth.backends import cuda as kc  # noqa: E402
from kernelsynth.loading import import_file  # noqa: E402
from kernelsynth.spec import load_spec  # noqa: E402

T0 = time.time()
LINES: list = []

EDITS = {
    "weights_once": [("if (tc.k0 + o < K) bytes += 288;", "if (tc.k0 + o < K && u_copy == 0) bytes += 288;"),
                     ("if (tc.k0 + o < K)\n                        bulk_copy(",
                      "if (tc.k0 + o < K && u_copy == 0)\n                        bulk_copy(")],
    "pixels_once": [("if (c0 + c < C && ih >= 0 && ih < H) bytes +=", "if (c0 + c < C && ih >= 0 && ih < H && u_copy == 0) bytes +="),
                    ("if (c0 + c < C && ih >= 0 && ih < H)\n                        bulk_copy(",
                     "if (c0 + c < C && ih >= 0 && ih < H && u_copy == 0)\n                        bulk_copy(")],
    "no_transpose": [("for (int pp = pl; pp < NPAIR; pp += PT) {", "for (int pp = pl; pp < 0; pp += PT) {")],
}
EDITS["copies_once"] = EDITS["weights_once"] + EDITS["pixels_once"]
EDITS["tensor_only"] = EDITS["copies_once"] + EDITS["no_transpose"]


def log(msg: str = "") -> None:
    print(msg, flush=True)
    LINES.append(msg)


def variant(src: str, name: str) -> str:
    for old, new in EDITS.get(name, []):
        n = src.count(old)
        assert n >= 1, f"{name}: {old!r} not found in v8's source"
        src = src.replace(old, new)
    return src


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main() -> int:
    spec = load_spec("specs/conv_relu_maxpool/spec.yaml", task_folder=True)
    cand = {c.version: c for c in spec.candidates}["v8"]
    src0 = open(cand.file).read()
    REF = import_file("specs/conv_relu_maxpool/reference.py")
    cap = torch.cuda.get_device_capability()
    arch = f"sm_{cap[0]}{cap[1]}"
    log(f"{torch.cuda.get_device_name()} {arch}; torch {torch.__version__}")
    shape = dict(spec.timing_shape)
    flops = 2 * shape["N"] * shape["C_out"] * shape["H"] * shape["W"] * shape["C_in"] * 9
    names = ["base", "weights_once", "pixels_once", "copies_once", "no_transpose", "tensor_only"]
    for dt in os.environ.get("V8X_DTYPES", "bfloat16,float32").split(","):
        dtype = getattr(torch, dt)
        torch.manual_seed(0)
        ref = REF.Model(*REF.get_init_inputs(shape)).to("cuda", dtype).eval()
        (x,) = REF.get_inputs(shape, dtype, "cuda", torch.Generator(device="cuda").manual_seed(1))
        T = {}
        with torch.no_grad():
            want = ref(x)
            T["eager"] = bench(lambda: ref(x))
            for cfg in ({"BN": 128}, {"BN": 64}):
                for name in names if cfg["BN"] == 128 else ["base"]:
                    label = f"v8 {name} BN={cfg['BN']}"
                    try:
                        m = kc.RawKernelModel(ref, variant(src0, name), cand.launch, spec.interface, cfg, dt, arch)
                        y = m(x)
                        torch.cuda.synchronize()
                        if name == "base":
                            err = (y.float() - want.float()).abs().max().item()
                            log(f"{dt} {label}: max |v8 - eager| {err:.3e}")
                        T[label] = bench(lambda: m(x))
                    except Exception as e:  # noqa: BLE001
                        log(f"{dt} {label}: FAILED {type(e).__name__}: {str(e)[:400]}")
            try:
                comp = torch.compile(ref)
                comp(x)
                T["torch.compile"] = bench(lambda: comp(x))
            except Exception as e:  # noqa: BLE001
                log(f"{dt} torch.compile: FAILED {e!r}"[:400])
        base = T.get("v8 base BN=128")
        log(f"\n==== {dt} at {shape}")
        log("| kernel | ms | TFLOP/s | x v8 base | x torch.compile |")
        log("|---|---|---|---|---|")
        for k, ms in sorted(T.items(), key=lambda kv: kv[1]):
            xc = f"{T['torch.compile'] / ms:.3f}" if "torch.compile" in T else "-"
            log(f"| {k} | {ms:.4f} | {flops / ms / 1e9:.1f} | {base / ms if base else 0:.3f} | {xc} |")
    log(f"\ntotal {time.time() - T0:.0f} s")
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        open(os.path.join(out, "v8_experiments.txt"), "w").write("\n".join(LINES) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
