"""Parameters are inputs (VERIFICATION.md rule 21): the seeds and the small perturbation the
reference module and the candidate of each trial are built with. Runs in a worker and in the
independent reference process (:func:`kernelsynth.jobs.oracle`).

Every trial builds both modules after ``torch.manual_seed(param_seed(...))``
(:func:`kernelsynth.verify.inputs.param_seed`), so an answer cached across instances -- keyed on
the shapes, the class, the constructor arguments -- is stale on the next trial. Trial 1 of each
listed shape reuses trial 0's seed and builds both modules under :class:`PerturbDraws`: the
parameters are trial 0's except one element of every tensor the constructor fills at random.
A cache keyed on a few sampled weights then hands back trial 0's prepared weights, which are
wrong for trial 1. Preparing weights at construction (packing, transposing, casting) stays
legitimate: the perturbation happens while the module draws its parameters, before it prepares them.
"""

from __future__ import annotations

import random

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .inputs import param_seed

#: aten operators that fill a tensor with random numbers (what ``torch.nn.init`` and module
#: constructors dispatch); the k-th of them in a constructor is the k-th draw.
RANDOM_FILLS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
                          "cauchy_", "log_normal_", "rand", "randn", "randint", "randperm", "normal",
                          "rand_like", "randn_like", "randint_like", "bernoulli", "multinomial"})


def build_seed(seed: int, group: str, si: int, t: int):
    """``(torch seed, perturb)`` for the modules of trial ``t`` of shape ``si`` of ``group``:
    trial 1 of a listed shape reuses trial 0's seed with the perturbation; every other trial
    gets its own seed."""
    if group == "listed" and t == 1:
        return param_seed(seed, group, si, 0), True
    return param_seed(seed, group, si, t), False


class PerturbDraws(TorchDispatchMode):
    """While a module is constructed, change one element of every tensor a random fill produces
    (:data:`RANDOM_FILLS`): the element at a position drawn from ``(seed, draw number)`` gets
    ``-x - 2 sign(x) max|t|`` (``2 max|t|`` for a zero), far from its old value but within a few
    times the tensor's range. Deterministic in the order of the draws, so a reference and a
    candidate that draw their parameters the same way (KernelBench's convention) are perturbed alike."""

    def __init__(self, seed: int):
        super().__init__()
        self.seed, self.draws = seed, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in RANDOM_FILLS and isinstance(out, torch.Tensor) and out.numel() \
                and out.dtype.is_floating_point:
            rng = random.Random(f"{self.seed}:{self.draws}")
            self.draws += 1
            flat = out.view(-1) if out.is_contiguous() else None
            if flat is not None:
                i = rng.randrange(out.numel())
                x = float(flat[i])
                scale = float(out.abs().max()) or 1.0
                flat[i] = -x - 2.0 * scale * (1.0 if x >= 0 else -1.0)
        return out
