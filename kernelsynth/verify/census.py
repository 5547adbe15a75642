"""aten-op recording (VERIFICATION.md rule 14): which of torch's operators a candidate's call
dispatches, so a PyTorch fallback is labelled. Runs in a worker."""

from __future__ import annotations

from typing import Callable, List, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class RecordAtenOps(TorchDispatchMode):
    """Collect the names of the aten operators a call dispatches (``flip``, ``empty_like``, ...).
    Every route to an operator -- ``torch.flip``, ``Tensor.flip``, ``torch.ops.aten.flip`` --
    passes through the dispatcher; a Triton or CUDA kernel launch does not."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def aten_ops_of(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device) -> List[str]:
    """The sorted aten operator names one call of ``candidate`` dispatches."""
    rec = RecordAtenOps()
    with torch.no_grad(), rec:
        candidate(*inputs)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return sorted(rec.ops)
