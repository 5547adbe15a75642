"""Parameters are inputs (VERIFICATION.md rule 21): the seeds and the small perturbations the
reference module and the candidate of each trial are built with. Runs in a worker and in the
independent reference process (:func:`kernelsynth.jobs.oracle`).

Every trial builds both modules after ``torch.manual_seed(param_seed(...))``
(:func:`kernelsynth.verify.inputs.param_seed`), so an answer cached across instances -- keyed on
the shapes, the class, the constructor arguments -- is stale on the next trial. Trials 1 and 2 of
each listed shape reuse trial 0's seed and build both modules under :class:`PerturbDraws`: the
parameters are trial 0's except for a small change of the first tensor the constructor fills at
random (the weight of a layer). Trials 0-3 plant a block of two of its values in it, and trial 1
exchanges them (``"swap"``: the sums, the extrema, their positions, the sorted values and each
line's position moments up to the order the block's Thue-Morse pattern keeps -- the
position-weighted sum, and the second moment along dims of 8 or more -- stay as they were) and gets trial 0's inputs too
(:func:`kernelsynth.verify.inputs.trial_inputs`), so an output memo keyed on the input alone
hands back trial 0's answer; trial 2 moves one element to a value strictly inside the tensor's
range (``"inside"``: the maximum stays). A cache keyed on sums, extrema or a few sampled weights
then hands back trial 0's prepared weights, which are wrong. Preparing weights at construction
(packing, transposing, casting) stays legitimate: the perturbation happens while the module
draws its parameters, before it prepares them.
"""

from __future__ import annotations

import random

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .dynamo_deferral import defer
from .inputs import PARAM_EXCHANGE_BLOCK, apply_changes, param_seed, plan_exchange

#: aten operators that fill a tensor with random numbers (what ``torch.nn.init`` and module
#: constructors dispatch); the k-th of them in a constructor is the k-th draw.
RANDOM_FILLS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
                          "cauchy_", "log_normal_", "rand", "randn", "randint", "randperm", "normal",
                          "rand_like", "randn_like", "randint_like", "bernoulli", "multinomial"})


def build_seed(seed: int, group: str, si: int, t: int):
    """``(torch seed, perturb)`` for the modules of trial ``t`` of shape ``si`` of ``group``:
    trial 0 of a listed shape gets ``"plant"`` and trials 1, 2 and 3 reuse its seed with the
    perturbation ``"swap"``, ``"inside"`` and ``"rest"`` (:class:`PerturbDraws`, built with
    ``plant=True`` by :func:`kernelsynth.jobs._constructing`: all four share the planted block);
    every other trial gets its own seed and ``None``."""
    if group == "listed" and t in (0, 1, 2, 3):
        return param_seed(seed, group, si, 0), ("plant", "swap", "inside", "rest")[t]
    return param_seed(seed, group, si, t), None


@defer  # its raw __torch_dispatch__ until torch._dynamo is imported (dynamo_deferral)
class ScaleDraws(TorchDispatchMode):
    """While a module is constructed, multiply every tensor a random fill produces
    (:data:`RANDOM_FILLS`, floating dtypes) by ``scale`` in place: the parameters of an input-range
    probe with ``params: true`` (VERIFICATION.md rule 24). Constant fills (a norm's ones and
    zeros) are kept. A reference and a candidate that draw their parameters the same way
    (KernelBench's convention) are scaled alike, before either prepares them."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = float(scale)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in RANDOM_FILLS and isinstance(out, torch.Tensor) and out.numel() \
                and out.dtype.is_floating_point:
            out.mul_(self.scale)
        return out


def probe_perturb(probes, group: str):
    """The construction change of ``group``'s modules: ``("scale", s)`` for the group
    ``probe<k>`` of a probe that scales its parameters (``params: true``, :class:`ScaleDraws`),
    else None."""
    if probes and group.startswith("probe"):
        probe = probes[int(group[len("probe"):])]
        if probe["kind"] == "scale" and probe.get("params"):
            return ("scale", float(probe["value"]))
    return None


@defer  # its raw __torch_dispatch__ until torch._dynamo is imported (dynamo_deferral)
class PerturbDraws(TorchDispatchMode):
    """While a module is constructed, change the first tensor a random fill produces
    (:data:`RANDOM_FILLS`, floating dtypes, contiguous: usually the weight, the tensor a
    candidate prepares) at a position drawn from ``seed``; the other draws stay as drawn, so a
    fingerprint over several tensors (weight samples and bias ends) still matches on them:

    * ``kind="swap"``: an element at a drawn position strictly inside the tensor's range trades
      places with the interior element whose value is farthest from it (a permutation: sums, sums
      of squares, the sorted values, the minimum, the maximum and their positions are unchanged,
      the module's output is not; redteam_s8 lk1 keyed prepared parameters on exactly those five
      numbers per tensor and met the old swap, whose far end was an extremum); with fewer than two
      interior values, the element whose value is farthest from the drawn one;
    * ``kind="inside"``: the element at a drawn position becomes ``-x/2`` (``max|t|/2`` for a
      zero): a new value strictly inside ``(-max|t|, max|t|)``, so the maximum stays;
    * ``kind="rest"``: the first tensor stays as drawn and every later one (the bias) gets the
      ``"inside"`` change: prepared parameters cached on the weight alone are stale
      (tests/adversarial/redteam_s7 k1, lk1: two modules with one weight and two biases).

    * ``kind="plant"`` (trial 0), and with ``plant=True`` before any of the others: a block of
      the first tensor gets two of its own values in the +-1 pattern of
      :func:`kernelsynth.verify.inputs.plan_exchange`; ``"swap"`` then exchanges the two values
      instead of swapping two elements (the change keeps the tensor's values, extrema and their
      positions, and along every dim of four or more each line's sum and position-weighted sum,
      along dims of eight or more the second moment too, in a block of at most
      :data:`~kernelsynth.verify.inputs.PARAM_EXCHANGE_BLOCK` elements: prepared parameters keyed
      on such statistics -- session 9's reading of redteam_s8 lk1's class, redteam_s9 rk2's second
      moment -- are stale), falling back to the interior swap when no block can be planted.

    Deterministic in the order of the draws, so a reference and a candidate that draw their
    parameters the same way (KernelBench's convention) are perturbed alike. A first tensor of one
    element is left as drawn by ``"swap"``."""

    def __init__(self, seed: int, kind: str = "swap", plant: bool = False):
        super().__init__()
        if kind not in ("swap", "inside", "rest", "plant"):
            raise ValueError(f"kind must be 'swap', 'inside', 'rest' or 'plant', got {kind!r}")
        if kind == "plant":
            plant = True
        self.seed, self.kind, self.draws, self.plant = seed, kind, 0, plant

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in RANDOM_FILLS and isinstance(out, torch.Tensor) and out.numel() \
                and out.dtype.is_floating_point:
            rng = random.Random(f"{self.seed}:{self.draws}")
            self.draws += 1
            exchange = []
            if self.plant and self.draws == 1 and out.is_contiguous() and out.numel() >= 2:
                gen = torch.Generator(device=out.device).manual_seed(rng.randrange(2 ** 62))
                plant, exchange = plan_exchange([out.detach()], gen, max_block=PARAM_EXCHANGE_BLOCK)
                apply_changes([out.detach()], plant)
            if self.kind == "plant":
                return out
            if self.kind == "swap" and exchange:  # the planted block's two values trade places
                apply_changes([out.detach()], exchange)
                return out
            target = self.draws > 1 if self.kind == "rest" else self.draws == 1
            flat = out.view(-1) if out.is_contiguous() and target else None
            if flat is not None:
                i = rng.randrange(out.numel())
                x = float(flat[i])
                if self.kind == "swap":
                    # both ends interior (strictly between the minimum and the maximum), so the
                    # extrema and their positions stay too (redteam_s8 lk1: prepared parameters keyed
                    # on sum, argmax, argmin, max and min); the drawn position is moved into the interior
                    v = flat.double()
                    inside = (v > v.min()) & (v < v.max())
                    if int(inside.sum()) >= 2:
                        where = inside.nonzero().view(-1)
                        i = int(where[rng.randrange(where.numel())])
                        x = float(flat[i])
                        dist = torch.where(inside, (v - x).abs(), torch.full_like(v, -1.0))
                    else:  # fewer than two interior values: the most distant one
                        dist = (v - x).abs()
                    j = int(dist.argmax())
                    if j != i:
                        y = float(flat[j])
                        flat[i], flat[j] = y, x
                else:
                    flat[i] = -x / 2 if x != 0 else float(out.abs().max()) / 2
        return out
