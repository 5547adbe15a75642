"""The ``torch`` backend: a Python file whose ``ModelNew`` is written in PyTorch (eager operators,
``torch.compile``), e.g. a ladder's eager first rung. Runs on the interpreter's CPU tensors too;
its source is screened. The trusted baselines (eager, torch.compile) are recorded with this
backend; :func:`kernelsynth.jobs.evaluate` builds them from the reference."""

from __future__ import annotations

from . import Backend


class TorchBackend(Backend):
    name = "torch"
    cpu_run = "eager PyTorch on the CPU"


BACKEND = TorchBackend()
