"""The ``triton`` backend (the default): a Python file whose ``ModelNew`` launches ``@triton.jit``
kernels. Runs on the Triton interpreter too; its source is screened. Also: compile statistics of
Triton kernels (registers, spills and shared memory per kernel)."""

from __future__ import annotations

from types import ModuleType
from typing import Dict, List, Optional

from . import Backend


class TritonBackend(Backend):
    name = "triton"


BACKEND = TritonBackend()


def _jit_functions(module: ModuleType):
    from triton.runtime.jit import JITFunction

    for obj in vars(module).values():
        fn = obj
        while fn is not None and not isinstance(fn, JITFunction):  # autotuner / heuristics wrappers
            fn = getattr(fn, "fn", None)
        if fn is not None:
            yield fn


def compiled_kernels(module: ModuleType) -> List[object]:
    """Every compiled kernel (triton CompiledKernel) cached by the module's @triton.jit functions."""
    kernels = []
    for fn in _jit_functions(module):
        for cache in getattr(fn, "device_caches", {}).values():
            for part in cache if isinstance(cache, tuple) else (cache,):
                if isinstance(part, dict):
                    kernels.extend(k for k in part.values() if hasattr(k, "n_regs"))
    return kernels


def kernel_ids(module: ModuleType) -> set:
    """Ids of the kernels the module's @triton.jit functions have compiled so far."""
    return {id(k) for k in compiled_kernels(module)}


def compile_stats(module: ModuleType, exclude: Optional[set] = None) -> Dict[str, Optional[int]]:
    """``n_regs`` (max over kernels, per thread), ``n_spills`` (sum, registers spilled),
    ``shared_bytes`` (max, bytes of shared memory per block) and ``n_kernels``.

    ``exclude``: ids of kernels compiled before this job (:func:`kernel_ids`), so a worker that
    ran other configs of the same file reports only this job's kernels. All None when nothing
    was compiled (the interpreter, or a non-Triton candidate)."""
    kernels = [k for k in compiled_kernels(module) if id(k) not in (exclude or set())]
    if not kernels:
        return {"n_regs": None, "n_spills": None, "shared_bytes": None, "n_kernels": 0}
    for k in kernels:
        init = getattr(k, "_init_handles", None)
        if callable(init):
            init()
    return {
        "n_regs": max(int(k.n_regs) for k in kernels),
        "n_spills": sum(int(k.n_spills) for k in kernels),
        "shared_bytes": max(int(getattr(k.metadata, "shared", 0)) for k in kernels),
        "n_kernels": len(kernels),
    }
