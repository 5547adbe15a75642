"""Compile (not run) every Triton kernel of every task's ladder for sm_90, on a machine without a GPU.

    PYTHONPATH=$PWD python3 bench/compile_catalog_sm90.py [task ...] [--shapes N] [--jobs J] [--regs] [--versions v2 ...]

Why: the Triton interpreter (hw=cpu, CI) accepts code that Triton's compiler refuses -- a global
``NEG_BIG = -3.0e38`` read inside a ``@triton.jit`` function runs on the interpreter but is a
``CompilationError`` on the GPU (cross_entropy v2 on the H200, BENCHMARKS.md). Triton's compiler
itself needs no GPU: ``triton.compile`` with ``GPUTarget("cuda", 90, 32)`` lowers to PTX and runs
the bundled ptxas to a cubin (the method of tests/adversarial/redteam_2026_12_01/compile_sm90.py).

How: for each task (default: every task found), each ``backend: triton`` version, each dtype of the
spec (the GPU's dtypes, not the interpreter's) and each config of its tunables, the version's
``ModelNew(*init, **config)`` is called on CPU tensors from the reference's ``get_inputs`` at the
first ``--shapes`` verify shapes (smallest input first) and at the timing shape (on the ``meta``
device when its inputs cannot be drawn there, so no memory is used). Triton's active driver is
replaced by a stand-in that reports an sm_90 target, and every kernel launch becomes a
compile-only warmup (``JITFunction.run(..., warmup=True)``): the launch's argument types and
specialisations (16-byte alignment, divisibility by 16, value 1) are those a GPU call with the same
arguments would have. A launch that needs more than the 227 KiB of shared memory a block can get
on sm_90 fails too (the GPU raises OutOfResources at load time).

Not covered: what a wrapper launches only for data it reads back (the outputs here are never
computed), and native CUDA versions (tests/test_tasks.py compiles those with nvcc).

Prints one line per (task, version, dtype, config): OK with the number of kernels and the largest
shared-memory use, or FAIL with the error's last lines. Exit status 1 when anything failed. With
``--regs`` the OK line also gives the most registers per thread and spill bytes (stores + loads)
of any of its kernels, from the ptxas Triton compiles sm_90 with (``get_ptxas(90)``) run with ``-v`` on each kernel's PTX for sm_90a (a
second assembly, a second or so per kernel; what the GPU loads is the same ptxas's cubin).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

#: bytes of shared memory one block may use on sm_90 (227 KiB, CUDA C Programming Guide, Compute
#: Capability 9.0 technical specifications)
SM90_MAX_SHARED = 227 * 1024
#: inputs above this many elements are made on the meta device rather than drawn on the CPU
CPU_NUMEL_LIMIT = 1 << 22


_COMPILED: list = []  # (kernel name, CompiledKernel) of every launch since the last reset


def _install_compile_only_driver():
    """Make every ``kernel[grid](...)`` a compile-only warmup for sm_90; returns the list that
    collects the compiled kernels."""
    import torch
    import triton.runtime.jit as jit
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    class Sm90CompileOnly:
        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_active_torch_device(self):
            return torch.device("cpu")

        def is_active(self):
            return True

    driver.set_active(Sm90CompileOnly())
    original = getattr(jit.JITFunction.run, "compile_only_original", jit.JITFunction.run)  # once per process

    def run(self, *args, grid, warmup, **kwargs):
        kernel = original(self, *args, grid=grid, warmup=True, **kwargs)
        _COMPILED.append((self.fn.__name__, kernel))
        return None

    run.compile_only_original = original
    jit.JITFunction.run = run
    return _COMPILED


def _numel(tensors):
    import torch

    return sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))


def _inputs(ref_mod, shape, dtype):
    """The reference's inputs for ``shape``: on the meta device when they are large (and can be
    made there), else drawn on the CPU."""
    import torch

    try:
        meta = ref_mod.get_inputs(shape, dtype, "meta", None)
    except Exception:
        meta = None
    if meta is not None and _numel(meta) > CPU_NUMEL_LIMIT:
        return meta
    return ref_mod.get_inputs(shape, dtype, "cpu", torch.Generator().manual_seed(0))


def _ptxas_usage(kernel):
    """(registers per thread, spill bytes stored + loaded) of one compiled kernel, from ``ptxas -v``."""
    import re
    import subprocess
    import tempfile

    from triton.backends.nvidia.compiler import get_ptxas

    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(kernel.asm["ptx"])
        f.flush()
        out = subprocess.run([get_ptxas(90).path, "-v", "--gpu-name", "sm_90a", f.name, "-o", os.devnull],
                             capture_output=True, text=True, timeout=300)
    text = out.stderr + out.stdout
    regs = max((int(r) for r in re.findall(r"Used (\d+) registers", text)), default=-1)
    spills = sum(int(a) + int(b) for a, b in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text))
    return regs, spills


def check_task(name: str, n_shapes: int = 2, regs: bool = False, versions=None):
    """[(label, ok, detail)] for every Triton version x dtype x config of task ``name``."""
    os.environ.pop("TRITON_INTERPRET", None)  # @triton.jit decides at decoration time
    import torch

    compiled = _install_compile_only_driver()
    from kernelsynth.jobs import init_inputs
    from kernelsynth.loading import import_file
    from kernelsynth.spec import load_spec
    from kernelsynth.tasks import discover

    spec = load_spec(discover()[name], task_folder=True)
    ref_mod = import_file(str(spec.reference))
    by_size = sorted(spec.verify_shapes, key=lambda s: _numel(_inputs(ref_mod, s, torch.float32)))
    shapes = by_size[:n_shapes] + ([spec.timing_shape] if spec.timing_shape else [])
    results = []
    for cand in spec.candidates:
        if cand.backend != "triton" or (versions and cand.version not in versions):
            continue
        mod = import_file(str(cand.file))
        for dtype_name in spec.dtypes:
            dtype = getattr(torch, dtype_name)
            for cfg in cand.configs():
                label = f"{name} {cand.version} {dtype_name} {cfg}"
                del compiled[:]
                try:
                    with torch.no_grad():
                        for shape in shapes:
                            model = mod.ModelNew(*init_inputs(ref_mod, shape), **cfg)
                            if dtype.is_floating_point:
                                model = model.to(dtype)
                            model(*_inputs(ref_mod, shape, dtype))
                    big = [(fn, k.metadata.shared) for fn, k in compiled if k.metadata.shared > SM90_MAX_SHARED]
                    if big:
                        raise RuntimeError(f"shared memory above {SM90_MAX_SHARED} bytes per block: {big}")
                    if not compiled:
                        raise RuntimeError("no Triton kernel was launched")
                    smem = max(k.metadata.shared for _, k in compiled)
                    detail = f"{len({fn for fn, _ in compiled})} kernels, shared <= {smem} B"
                    if regs:
                        usage = [_ptxas_usage(k) for _, k in compiled]
                        detail += (f", registers <= {max(r for r, _ in usage)}, "
                                   f"spill bytes <= {max(sp for _, sp in usage)}")
                    results.append((label, True, detail))
                except Exception:
                    results.append((label, False, "".join(traceback.format_exc().splitlines(True)[-6:])))
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="*")
    ap.add_argument("--shapes", type=int, default=2, help="smallest verify shapes to call with (plus the timing shape)")
    ap.add_argument("--jobs", type=int, default=2, help="tasks compiled in parallel (processes)")
    ap.add_argument("--regs", action="store_true", help="also report registers and spills (ptxas -v)")
    ap.add_argument("--versions", nargs="*", default=None, help="only these versions (e.g. v2)")
    args = ap.parse_args(argv)
    from kernelsynth.tasks import discover

    names = args.tasks or sorted(discover())
    start = time.monotonic()
    failed = 0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for results in pool.map(check_task, names, [args.shapes] * len(names), [args.regs] * len(names),
                                [args.versions] * len(names)):
            for label, ok, detail in results:
                failed += not ok
                print(("OK   " if ok else "FAIL ") + label + ": " + detail, flush=True)
    print(f"{failed} failed; {time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
