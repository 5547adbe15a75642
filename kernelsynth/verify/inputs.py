"""Trial inputs (VERIFICATION.md rules 1 and 8): seeded per (run seed, shape, trial), with edge
values planted for ``exact`` comparisons. Deterministic, so the independent reference process
(:func:`kernelsynth.jobs.oracle`) rebuilds the same inputs bit for bit."""

from __future__ import annotations

import hashlib
from typing import Callable, Dict

import torch

from .comparison import _bits


def trial_seed(seed: int, *parts) -> int:
    """A 63-bit seed derived from the run seed and the trial's coordinates (stable across runs)."""
    digest = hashlib.sha256(repr((seed,) + parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def param_seed(seed: int, group: str, si: int, t: int) -> int:
    """The seed ``torch.manual_seed`` gets before the reference module and the candidate of trial
    ``t`` of shape number ``si`` of ``group`` (``listed``, ``derived``, ``timing``, ``timed``) are
    built (VERIFICATION.md rule 21: parameters are inputs, fresh per trial). The independent
    reference process builds the same parameters from it."""
    return trial_seed(seed, "init", group, si, t)


def shape_label(shape: Dict[str, int]) -> str:
    """``{"M": 3, "N": 5}`` -> ``"3x5"``, as reasons name shapes."""
    return "x".join(str(v) for v in shape.values())


def trial_inputs(get_inputs: Callable, shape: Dict[str, int], si: int, t: int, seed: int, dtype: torch.dtype,
                 device: torch.device, special_values: bool):
    """The inputs of trial ``t`` of shape number ``si`` and the generator that made them (it goes
    on to draw the staleness check's fresh values). Deterministic: the independent reference
    process (:func:`kernelsynth.jobs.oracle`) rebuilds the same inputs bit for bit."""
    label = shape_label(shape)
    gen = torch.Generator(device=device).manual_seed(trial_seed(seed, si, t, label))
    inputs = list(get_inputs(shape, dtype, device, gen))
    if special_values and t == 1:
        inputs = [plant_special_values(x, gen) for x in inputs]
    return inputs, gen


def plant_special_values(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A copy of ``x`` with edge values at random positions: NaN, +Inf, -Inf, -0.0, +-6e4 (within
    float16's range) for floats; the dtype's min and max for ints. Covers distribution cheats
    (code that is only right for randn-like data)."""
    if not isinstance(x, torch.Tensor) or x.numel() == 0 or x.dtype == torch.bool:
        return x
    y = x.clone()
    flat = y.view(-1)
    if y.dtype.is_floating_point:
        tiny = torch.finfo(y.dtype).tiny
        specials = [float("nan"), float("inf"), float("-inf"), -0.0, 6e4, -6e4, tiny / 4, -tiny / 2]
    else:
        info = torch.iinfo(y.dtype)
        specials = [info.min, info.max, 0, -1 if info.min < 0 else 1]
    n = min(flat.numel(), max(len(specials), flat.numel() // 16))
    # distinct positions: with repeated ones, which value lands is unspecified on CUDA, and the
    # independent check's process must rebuild these inputs bit for bit
    idx = torch.randperm(flat.numel(), generator=gen, device=y.device)[:n]
    vals = torch.tensor(specials, dtype=y.dtype, device=y.device).repeat(n // len(specials) + 1)[:n]
    flat[idx] = vals
    if y.dtype.is_floating_point and n > 1:  # a negative NaN with payload 1: its bits must survive too
        nan_bits = _bits(torch.full((1,), float("nan"), dtype=y.dtype, device=y.device))
        sign = torch.iinfo(nan_bits.dtype).min
        flat[idx[1:2]] = (nan_bits | sign | 1).view(y.dtype)
    return y


def plan_changes(inputs, gen: torch.Generator, region: bool):
    """Where and how to change ``inputs`` in place for the partial-staleness check (VERIFICATION.md
    rule 10): for every tensor input, one element (``region`` False) or a run of consecutive
    elements (``region`` True: 1/64 of the tensor, 2 to 4096 elements) at a position drawn from
    ``gen``, each given a value far from its old one (floats: ``-x - 3 sign(x)``, 3 for a zero;
    ints: ``x + 1234567`` wrapping; bools: negated). Returns ``[(input index, flat indices, values)]``
    for :func:`apply_changes`; drawing it before a timed loop keeps the loop's own work to a copy."""
    changes = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor) or x.numel() == 0:
            continue
        n = x.numel()
        k = min(n, max(2, min(4096, n // 64))) if region else 1
        start = int(torch.randint(0, n - k + 1, (1,), generator=gen, device=x.device).item())
        idx = torch.arange(start, start + k, device=x.device)
        old = x.reshape(-1)[idx]
        if x.dtype == torch.bool:
            new = ~old
        elif x.dtype.is_floating_point:
            o = old.double()
            new = torch.where(o == 0, 3.0, -o - 3.0 * torch.sign(o)).to(x.dtype)
            new = torch.where(torch.isfinite(o), new, torch.zeros_like(new))
        else:
            new = old + 1234567 if x.element_size() >= 4 else old + 77
        changes.append((i, idx, new))
    return changes


def apply_changes(inputs, changes) -> None:
    """Write the values of :func:`plan_changes` into ``inputs`` (in place; contiguous tensors, or
    through a reshaped copy written back)."""
    for i, idx, vals in changes:
        x = inputs[i]
        if x.is_contiguous():
            x.view(-1)[idx] = vals
        else:
            flat = x.reshape(-1).clone()
            flat[idx] = vals
            x.copy_(flat.view(x.shape))
