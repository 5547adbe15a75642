"""The ``external`` backend: a candidate from outside the spec (``exploration.extra_candidates``,
kernelsynth/external.py), a Python file defining ``ModelNew`` by KernelBench's convention --
Triton, PyTorch or ``load_inline``, whichever it uses. Tried on the interpreter too; its source is
screened; a fresh worker runs each one."""

from __future__ import annotations

from . import Backend


class ExternalBackend(Backend):
    name = "external"
    cpu_run = "the CPU (its Triton kernels on the Triton interpreter)"
    in_specs = False


BACKEND = ExternalBackend()
