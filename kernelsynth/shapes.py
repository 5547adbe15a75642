"""Shapes the harness adds to a spec's verify shapes (references/VERIFICATION.md, rule 12).

Imported by the parent process (planning), so it needs no torch.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Dict, List, Mapping, Optional, Sequence

#: Per dim, what a valid value must satisfy: ``{"min": 2, "multiple_of": 8}`` (spec ``constraints``).
Constraints = Mapping[str, Mapping[str, int]]


def fit(name: str, value: int, constraints: Optional[Constraints], up: bool = True) -> int:
    """``value`` moved to the nearest value of dim ``name`` its ``constraints`` allow: at least
    ``min`` (default 1) and a multiple of ``multiple_of`` (default 1), rounding up (``up``) or down
    (never below the smallest allowed value)."""
    rule = (constraints or {}).get(name, {})
    low, m = int(rule.get("min", 1)), int(rule.get("multiple_of", 1))
    low = -(-low // m) * m
    value = -(-value // m) * m if up else value // m * m
    return max(low, value)


def allowed(shape: Mapping[str, int], constraints: Optional[Constraints]) -> bool:
    """True when every dim of ``shape`` satisfies its ``constraints`` (:func:`fit` leaves it alone)."""
    return all(fit(n, v, constraints) == v for n, v in shape.items())

#: A shape with a dimension above this many elements is always verified (:func:`derived_shapes`):
#: one block of 4096 elements is the commonest size a shape-specialised kernel gets away with.
THRESHOLD_DIM = 4096


def derived_shapes(shapes: Sequence[Dict[str, int]], seed: int, fresh: int = 2,
                   constraints: Optional[Constraints] = None) -> List[Dict[str, int]]:
    """Shapes the harness adds to a spec's verify shapes (references/VERIFICATION.md, rule 12).

    * when no listed shape has a dim above :data:`THRESHOLD_DIM`: one listed shape with one dim
      raised to ``THRESHOLD_DIM + 1``, the choice with the fewest elements (more than 4096 elements
      and a row longer than 4096 -- the last dim on a tie --, still cheap on the interpreter);
    * ``fresh`` random ragged shapes drawn from the run ``seed``: every dim uniform in
      ``[1, largest value of that dim in shapes]``, made odd (so no power of 2 above 1), with no
      more elements than the largest listed shape; a candidate specialised to the listed shapes
      cannot know them in advance.

    ``shapes``: dicts of named positive dims, all with the same names. ``constraints``: per dim a
    ``min`` and a ``multiple_of`` every new shape honours (:func:`fit`; a dim with ``multiple_of``
    is drawn as a multiple of it rather than odd). Returns new dicts, none equal to a listed shape
    or to each other.
    """
    digest = hashlib.sha256(repr((seed, "derived-shapes", [sorted(s.items()) for s in shapes])).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    names = list(shapes[0])
    top = {n: max(s[n] for s in shapes) for n in names}
    out: List[Dict[str, int]] = []
    seen = [dict(s) for s in shapes]
    if all(v <= THRESHOLD_DIM for s in shapes for v in s.values()):
        options = []
        for s in shapes:  # raise one dim of one listed shape; the fewest elements win, then the last dim
            for i, n in enumerate(names):
                big = dict(s, **{n: fit(n, THRESHOLD_DIM + 1, constraints)})
                options.append((math.prod(big.values()), -i, big))
        big = min(options, key=lambda o: o[:2])[2]
        out.append(big)
        seen.append(big)
    limit = max(math.prod(s.values()) for s in shapes)
    for _ in range(fresh):
        for _attempt in range(50):
            cand = {n: fit(n, min(top[n], rng.randint(1, top[n]) | 1), constraints) for n in names}
            if cand not in seen and math.prod(cand.values()) <= limit:
                out.append(cand)
                seen.append(cand)
                break
    return out



#: A dim is large and ragged when it is at least :data:`LARGE_MIN` and a multiple of none of
#: these (the tile sizes kernels use): a kernel wrong only past one tile of a ragged dim shows.
RAGGED_MODULI = (8, 16, 32, 64, 128)
#: The smallest large value: past two 128-wide tiles.
LARGE_MIN = 257


#: Per hardware target: (largest drawn value, element budget) of :func:`large_dim_shapes`. The
#: interpreter runs every program instance in Python, so its budget is small; a GPU's shapes of
#: 2^30 elements at most stay within a few GiB.
LARGE_DIM_PLAN = {"interpret": (300, 2**20), "gpu": (8192, 2**30)}


def is_large_ragged(value: int, low: int = LARGE_MIN, multiple_of: int = 1) -> bool:
    """True when ``value >= low`` and no :data:`RAGGED_MODULI` divides it; for a dim that must be
    a multiple of ``multiple_of`` > 1, when ``value >= low`` is an odd multiple of it (ragged by
    every larger power-of-2 tile)."""
    if multiple_of > 1:
        return value >= low and value % multiple_of == 0 and (value // multiple_of) % 2 == 1
    return value >= low and all(value % m for m in RAGGED_MODULI)


def large_dim_shapes(shapes: Sequence[Dict[str, int]], seed: int, high: int, budget: int,
                     low: int = LARGE_MIN, constraints: Optional[Constraints] = None,
                     pack: bool = True) -> List[Dict[str, int]]:
    """Shapes that make every dim large and ragged somewhere (references/VERIFICATION.md, rule 12).

    For each dim (in the order of the shapes' keys) that no shape of ``shapes`` already gives a
    value :func:`is_large_ragged`, a value drawn from the run ``seed`` (log-uniform in
    ``[low, high]``, made odd, so no modulus of :data:`RAGGED_MODULI` divides it). It joins the
    previous large shape when the product of that shape's dims stays within ``budget`` (elements:
    a memory and work bound per hardware target); otherwise it starts a new shape with every
    other dim at its smallest value in ``shapes``, lowered so that the product stays within
    ``budget``, and the dim is left out when even ``low`` does not fit. Planned per dim, so a dim
    that only ever appears small (a channel count, a batch) gets a large value; packed, so a task
    of five dims needs two or three new shapes rather than five (each new shape is a new
    specialisation a JIT-compiled candidate compiles inside the protocol's time). ``pack=False``
    (the interpreter, which compiles nothing and pays for every element) keeps one shape per dim.

    ``shapes``: dicts of named positive dims, all with the same names (the listed shapes and any
    derived ones already planned). ``constraints``: per dim a ``min`` and a ``multiple_of``
    (:func:`fit`); a dim with ``multiple_of`` m > 1 is made an odd multiple of m instead of odd.
    Returns new dicts, none equal to one of ``shapes``.
    """
    digest = hashlib.sha256(repr((seed, "large-dims", [sorted(s.items()) for s in shapes])).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    names = list(shapes[0])
    smallest = {n: fit(n, min(s[n] for s in shapes), constraints) for n in names}
    out: List[Dict[str, int]] = []
    for n in names:
        value = int(math.exp(rng.uniform(math.log(low), math.log(max(low, high)))))
        mult = int((constraints or {}).get(n, {}).get("multiple_of", 1))
        if any(is_large_ragged(s[n], low, mult) for s in list(shapes) + out):
            continue
        if out and pack:  # packed into the previous large shape when the drawn value still fits the budget
            last = out[-1]
            packed = value // mult
            packed = (packed - (1 - packed % 2)) * mult
            rest = math.prod(v for m, v in last.items() if m != n)
            if packed >= low and packed * rest <= budget and fit(n, packed, constraints) == packed:
                last[n] = packed
                continue
        rest = math.prod(v for m, v in smallest.items() if m != n)
        value = min(value, budget // max(1, rest)) // mult
        value -= 1 - value % 2  # odd (in units of multiple_of): a multiple of no larger power of 2
        value *= mult
        if value < low or fit(n, value, constraints) != value:
            continue
        shape = dict(smallest, **{n: value})
        if shape not in shapes and shape not in out:
            out.append(shape)
    return [s for i, s in enumerate(out) if s not in shapes and s not in out[:i]]
