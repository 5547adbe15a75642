"""The ``inductor`` backend: TorchInductor's generated code for the task's reference, made into a
standalone file by :mod:`kernelsynth.inductor_extract` (the ``inductor`` candidate source,
``exploration.sources``). Its ``ModelNew(reference)`` reads the reference module's parameters and
buffers and calls inductor's ``call()``; the reference's forward is never called.

Generated code is untrusted like any candidate's: screened, run in a sandboxed fresh worker,
verified and censused. Its own kernels are the module's inductor kernels (``async_compile``
results: Triton ``CachingAutotuner`` objects on a GPU, C++ functions on the CPU); its
``extern_kernels.*`` calls (convolution, matmul) are aten operators the census records as
library calls. Runs on the CPU (C++) as on a GPU (Triton).
"""

from __future__ import annotations

import os
from typing import Any, Dict

from . import Backend

def _own(module) -> Dict[str, Any]:
    """The module's inductor kernels by name."""
    out = {}
    for name, value in vars(module).items():
        kind = type(value).__name__
        if kind.endswith("Autotuner") or (name.startswith("cpp_fused") and callable(value)):
            out[name] = value
    return out


class InductorBackend(Backend):
    name = "inductor"
    cpu_run = "TorchInductor's generated C++ code on the CPU"  # on a CPU device inductor writes C++/OpenMP
    in_specs = False  # made by the inductor source, never named by a spec

    def load(self, file: str):
        """The generated module, imported with one inductor compile thread (no pool of processes or
        threads outlives its import; the kernels compile as the module is imported)."""
        os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        from torch._inductor import config

        config.compile_threads = 1
        if hasattr(config, "cpp_cache_precompile_headers"):  # a worker's /tmp is its own: a header serves one compile
            config.cpp_cache_precompile_headers = False
        return super().load(file)

    def build(self, ctx):
        """``ModelNew(reference)``: the trial's reference module (its seeded, perturbed parameters,
        on the job's device and dtype) is what the generated code reads."""
        return ctx.module.ModelNew(ctx.reference())

    def snapshot(self, module) -> Any:
        return None

    def compile_stats(self, module, model, snapshot: Any, modules_before: set) -> Dict[str, Any]:
        """``n_kernels``: the generated kernels; on a GPU ``n_regs`` (max), ``n_spills`` (sum) and
        ``shared_bytes`` (max) over their compiled launchers (None where inductor kept none)."""
        own = _own(module)
        regs, spills, shared = [], [], []
        for k in own.values():
            for launcher in getattr(k, "launchers", None) or []:
                for attr, into in (("n_regs", regs), ("n_spills", spills), ("shared", shared)):
                    v = getattr(launcher, attr, None)
                    if isinstance(v, int):
                        into.append(v)
        return {"n_kernels": len(own), "n_regs": max(regs) if regs else None,
                "n_spills": sum(spills) if spills else None, "shared_bytes": max(shared) if shared else None}

    def counts_launches(self, module, modules_before: set) -> bool:
        """Its launches pass no hook the census counts (C++ functions on the CPU; inductor's own
        Triton launchers on a GPU), so a call without a counted launch says nothing here."""
        return False

    def own_kernels(self, module, candidate, modules_before: set):
        names = set(_own(module))
        return lambda kernel: kernel.split("(")[0].strip() in names


BACKEND = InductorBackend()
