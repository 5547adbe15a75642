"""Shapes the harness adds to a spec's verify shapes (references/VERIFICATION.md, rule 12).

Imported by the parent process (planning), so it needs no torch.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from typing import Callable, Dict, List, Mapping, Optional, Sequence

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



#: Every dim of :func:`even_shape` is at least this when the element limit allows: past a 16-row
#: (16-column) group, so a kernel whose second group of rows or columns goes wrong shows.
EVEN_FLOOR = 18


def _two_mod_four(name: str, value: int, constraints: Optional[Constraints], up: bool = False) -> int:
    """The value nearest ``value`` (at most it, or with ``up`` at least it) that is ``multiple_of``
    times a number 2 mod 4, within dim ``name``'s constraints; 0 when there is none at most it."""
    m = int((constraints or {}).get(name, {}).get("multiple_of", 1))
    v = with_residue(max(value, 2 * m) if up else value, 2, m, up=up)
    while v > 0 and fit(name, v, constraints) != v:  # below a dim's min: the next such value up (or down)
        v += 4 * m if up else -4 * m
    return max(v, 0)


def _power_of_two(name: str, value: int, constraints: Optional[Constraints], up: bool = False) -> int:
    """The value nearest ``value`` (at most it, or with ``up`` at least it) that is ``multiple_of``
    times a power of 2, within dim ``name``'s constraints; 0 when there is none at most it."""
    m = int((constraints or {}).get(name, {}).get("multiple_of", 1))
    v = m
    if up:  # the smallest m * 2^k at least value that the constraints keep
        while v < value or fit(name, v, constraints) != v:
            v *= 2
        return v
    while v * 2 <= value:  # the largest m * 2^k at most value, halved while the constraints move it
        v *= 2
    if v > value:
        return 0
    while v > 0 and fit(name, v, constraints) != v:
        v = v // 2 if v > m else 0
    return v


def even_shape(shapes: Sequence[Dict[str, int]], seed: int, limit: int,
               constraints: Optional[Constraints] = None, aligned: bool = False) -> Optional[Dict[str, int]]:
    """A shape with every dim **even** (a value, or value / ``multiple_of``, that is 2 mod 4) and,
    where ``limit`` elements allow, every dim at least :data:`EVEN_FLOOR` (else every dim at the
    largest common even floor that fits), each dim then grown at a rate drawn from the run ``seed``
    (uniform in [0.7, 1]) to the largest common scale whose shape has at most ``limit`` elements;
    dims may pass their largest listed value. references/VERIFICATION.md rule 12: the
    interpreter's listed shapes keep few rows once the rows are long (rmsnorm_residual: at most 9
    rows past 64 columns) and every value its planners draw is odd, so a kernel wrong only on
    several rows of an even width (tests/adversarial/redteam_s24 ge_e1: the last pair of each row
    dropped when N is even and M >= 2; rn_j1: rows 8-15 of each 16-row group given rows 0-7's
    scale when M >= 16 and N >= 64) passed the CPU plan. None when no even shape fits ``limit``.

    With ``aligned`` every dim is a power of 2 instead (times ``multiple_of``), at least 16 where it
    fits (else 8, 4, 2): the sizes vector paths for multiples of 4, 8, 16 ... take, which a 2 mod 4
    value never reaches (redteam_s25 ge_q1: the last quad of each row dropped when N % 4 == 0 and
    M >= 2; rn_q1: rn_j1 with N % 4 == 0).
    """
    digest = hashlib.sha256(repr((seed, "aligned" if aligned else "even",
                                  [sorted(s.items()) for s in shapes])).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    names = list(shapes[0])
    rate = {n: rng.uniform(0.7, 1.0) for n in names}
    nearest = _power_of_two if aligned else _two_mod_four

    def value(n: str, target: float, c: Optional[Constraints]) -> int:  # at most the target, else the smallest
        return nearest(n, int(target), c) or nearest(n, 2, c, up=True)

    def fits(shape: Dict[str, int]) -> bool:
        return math.prod(shape.values()) <= limit
    for f in ((16, 8, 4, 2) if aligned else range(EVEN_FLOOR, 1, -4)):  # the largest common floor that fits
        floor = {n: nearest(n, f, constraints, up=True) for n in names}
        if fits(floor):  # then grown at the drawn rates, the largest common scale within the limit
            return _grow(floor, names, rate, fits, constraints, float(limit), value=value)
    return None


#: A dim is large and ragged when it is at least :data:`LARGE_MIN` and a multiple of none of
#: these (the tile sizes kernels use): a kernel wrong only past one tile of a ragged dim shows.
RAGGED_MODULI = (8, 16, 32, 64, 128)
#: The smallest large value: past two 128-wide tiles.
LARGE_MIN = 257


#: Per hardware target: (largest drawn value, element budget) of :func:`large_dim_shapes`. The
#: interpreter runs every program instance in Python, so its budget is small; a GPU's shapes of
#: 2^30 elements at most stay within a few GiB.
LARGE_DIM_PLAN = {"interpret": (300, 2**20), "gpu": (8192, 2**30)}


def odd_multiple(value: int, multiple_of: int = 1) -> int:
    """The largest odd multiple of ``multiple_of`` that is at most ``value`` (odd when
    ``multiple_of`` is 1: a multiple of no power of 2 above 1; an odd multiple of m: a multiple of
    no larger power-of-2 multiple of m). 0 or below when there is none (``value < multiple_of``)."""
    units = value // multiple_of
    return (units - (1 - units % 2)) * multiple_of


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
            packed = odd_multiple(value, mult)
            rest = math.prod(v for m, v in last.items() if m != n)
            if packed >= low and packed * rest <= budget and fit(n, packed, constraints) == packed:
                last[n] = packed
                continue
        rest = math.prod(v for m, v in smallest.items() if m != n)
        value = odd_multiple(min(value, budget // max(1, rest)), mult)
        if value < low or fit(n, value, constraints) != value:
            continue
        shape = dict(smallest, **{n: value})
        if shape not in shapes and shape not in out:
            out.append(shape)
    return [s for i, s in enumerate(out) if s not in shapes and s not in out[:i]]


#: Per hardware target: the budget of :func:`joint_shapes`, as (the product of a shape's dims --
#: it bounds every tensor the shape has --, the spec's ``work`` bytes, the spec's ``work`` FLOPs).
#: On a GPU: 2^25 elements (128 MiB per float32 tensor), 512 MiB moved, 2^34 FLOPs (a float64
#: reference runs them in well under a second on an H200). On the interpreter, None: no more than
#: the largest listed shape's (a joint shape costs no more than a listed one).
JOINT_PLAN = {"interpret": None, "gpu": (2**25, 2**29, 2**34)}
#: The two dims of a pair shape (:func:`joint_shapes`) multiply to more than this (a 16-bit
#: offset over them overflows).
PAIR_PRODUCT = 2**16
#: The other dims of a pair shape get at least this (odd) value when the budget allows.
PAIR_OTHERS = 7


def _joint_value(name: str, target: float, constraints: Optional[Constraints]) -> int:
    """The largest odd (odd-multiple) value of dim ``name`` at most ``target`` its constraints
    allow, or the smallest allowed value when there is none below it."""
    mult = int((constraints or {}).get(name, {}).get("multiple_of", 1))
    v = odd_multiple(int(target), mult)
    return v if v >= 1 and fit(name, v, constraints) == v else fit(name, max(1, int(target)), constraints, up=True)


def _grow(base: Dict[str, int], names: Sequence[str], draw: Mapping[str, float], fits: Callable,
          constraints: Optional[Constraints], start: float,
          cap: Optional[Mapping[str, int]] = None, value: Optional[Callable] = None) -> Optional[Dict[str, int]]:
    """``base`` with each of ``names`` at the odd value under ``t * draw[name]`` (and under
    ``cap[name]``; never below ``base``) for the largest ``t <= start`` whose shape ``fits``; None
    when even ``base`` does not. ``value(name, target, constraints)``: the value taken for a target
    (default :func:`_joint_value`, the largest odd one)."""
    t = max(1.0, start)
    cap = cap or {}
    value = value or _joint_value
    while True:
        cand = dict(base, **{n: max(base[n], value(n, max(1.0, min(t * draw[n], cap.get(n, t * draw[n]))),
                                                   constraints)) for n in names})
        if fits(cand):
            return cand
        if t <= 1.0:
            return None
        t = max(1.0, t * 0.95)


def joint_shapes(shapes: Sequence[Dict[str, int]], seed: int, fits: Callable[[Dict[str, int]], bool],
                 high: int, pairs: bool = True, constraints: Optional[Constraints] = None,
                 within_listed: bool = False) -> List[Dict[str, int]]:
    """Shapes where several dims are large and ragged together (references/VERIFICATION.md,
    rule 12): :func:`derived_shapes` and :func:`large_dim_shapes` raise one dim at a time, so a
    kernel wrong only when two dims are large together (a wide and deep channel tile, a spatial
    offset that overflows 16 bits when H * W > 2^16) passes them.

    * one **all-dims** shape: every dim odd (an odd multiple of its ``multiple_of``), drawn from the
      run ``seed`` in ``[0.7 t, t]`` for the largest common ``t <= high`` whose shape ``fits`` (a
      memory and work budget per hardware target: :data:`JOINT_PLAN`);
    * with ``pairs``, for each two dims (consecutive ones first: the dims a flattened offset or a
      2-D tile multiplies; then the others, e.g. a convolution's channels with its width), a **pair** shape with both at least :data:`LARGE_MIN`, odd, their product past
      :data:`PAIR_PRODUCT` (log-uniform draws), and every other dim odd and as large as the budget
      leaves (at least :data:`PAIR_OTHERS` when it fits, else its smallest listed value); left out
      when it does not fit or the all-dims shape already makes both dims large and ragged.

    ``shapes``: dicts of named positive dims (the listed shapes and any derived ones planned);
    their smallest values are the floor of every new value. ``constraints``: per dim
    ``min``/``multiple_of`` (:func:`fit`). ``within_listed``: no dim of the all-dims shape above
    its largest value in ``shapes`` (the interpreter: it pays per program instance, and a row
    count far above the listed ones multiplies them). Returns new dicts, none equal to one of
    ``shapes``.
    """
    digest = hashlib.sha256(repr((seed, "joint", [sorted(s.items()) for s in shapes])).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    names = list(shapes[0])
    smallest = {n: fit(n, min(s[n] for s in shapes), constraints) for n in names}
    out: List[Dict[str, int]] = []
    top = {n: max(s[n] for s in shapes) for n in names} if within_listed else None
    every = _grow(smallest, names, {n: rng.uniform(0.7, 1.0) for n in names}, fits, constraints, high, top)
    if every is not None and every not in shapes:
        out.append(every)
    # consecutive dims first (their draws as before), then every other two (redteam_s16 c5: a conv
    # kernel wrong only when C_in and W are large together; only consecutive pairs were planned)
    adjacent = list(zip(names, names[1:]))
    every_two = adjacent + [p for p in itertools.combinations(names, 2) if p not in adjacent]
    for a, b in (every_two if pairs else ()):
        if any(is_large_ragged(s[a]) and is_large_ragged(s[b]) for s in out):
            continue
        others = [n for n in names if n not in (a, b)]
        floor = dict(smallest, **{n: max(smallest[n], _joint_value(n, PAIR_OTHERS, constraints)) for n in others})
        lo = max(LARGE_MIN, math.isqrt(PAIR_PRODUCT) + 1)
        base = floor if fits(dict(floor, **{a: lo, b: lo})) else smallest
        if not fits(dict(base, **{a: lo, b: lo})):
            continue
        va, vb = lo, lo  # raised in turns, log-uniform, while the shape fits
        for name in (a, b):
            target = int(math.exp(rng.uniform(math.log(lo), math.log(max(lo, high)))))
            while target > lo:
                v = _joint_value(name, target, constraints)
                trial = dict(base, **{a: va, b: vb})
                trial[name] = v
                if v >= lo and fits(trial):
                    va, vb = (v, vb) if name == a else (va, v)
                    break
                target = int(target * 0.9)
        va, vb = _joint_value(a, va, constraints), _joint_value(b, vb, constraints)
        shape = _grow(dict(base, **{a: va, b: vb}), others, dict.fromkeys(others, 1.0), fits, constraints, high)
        if shape is None or shape[a] * shape[b] <= PAIR_PRODUCT or shape in shapes or shape in out:
            continue
        out.append(shape)
    return out



#: The residue classes every dim reaches at a large value (references/VERIFICATION.md, rule 12): a
#: value (of a dim with ``multiple_of`` m: the value / m) that is odd, 2 mod 4 or 4 mod 8. A vector
#: path of width 2, 4 or 8 with a broken tail runs only at one of them; none is a multiple of 8.
RESIDUES = (1, 2, 4)
#: Per hardware target: how many of :data:`RESIDUES` each dim reaches at a large value
#: (:func:`residue_shapes` ``cover``). The GPU: all of them. The interpreter: 2 (odd, and 2 mod 4
#: or 4 mod 8 in turn with the run seed and the dim): its shapes of one large dim run one program instance
#: per image or row in Python, and the third residue of every dim took conv_relu_maxpool's v3 job
#: on the CPU from 66 s to 214 s (one trial; references/VERIFICATION.md rule 12 and Limits).
RESIDUE_PLAN = {"interpret": 2, "gpu": len(RESIDUES)}


def residue(value: int, multiple_of: int = 1) -> int:
    """The largest power of 2 dividing ``value / multiple_of``, capped at 8 (1: odd, 2: 2 mod 4,
    4: 4 mod 8, 8: a multiple of 8). ``value``: a positive multiple of ``multiple_of``."""
    u = value // multiple_of
    return min(8, u & -u)


def with_residue(value: int, r: int, multiple_of: int = 1, up: bool = False) -> int:
    """The value nearest ``value`` -- at most it, or with ``up`` at least it -- that is
    ``multiple_of * u`` with ``u = r mod 2r`` (:func:`residue` ``r``, for ``r`` in
    :data:`RESIDUES`). 0 or below when there is none at most ``value``."""
    u = -(-value // multiple_of) if up else value // multiple_of
    u = u + (r - u) % (2 * r) if up else u - (u - r) % (2 * r)
    return u * multiple_of


def residue_shapes(listed: Sequence[Dict[str, int]], derived: Sequence[Dict[str, int]], seed: int, high: int,
                   fits: Callable[[Dict[str, int]], bool], constraints: Optional[Constraints] = None, low: int = LARGE_MIN,
                   above_listed: bool = False, pack: bool = True, top: int = 3,
                   cover: int = len(RESIDUES)) -> List[Dict[str, int]]:
    """``derived`` with residues changed, and the shapes to add, so that every dim reaches each of
    :data:`RESIDUES` at a large value (references/VERIFICATION.md, rule 12). The other planners
    make every new value odd (an odd multiple), so without this a kernel wrong only at even sizes
    that are no multiple of 4 or 8 (a vector path with a broken half-vector tail) passes them all.

    A dim's value is *large* when it is at least ``L = low``, or with ``above_listed`` (the
    interpreter, whose listed shapes are small) ``L = max(low, 1 + its largest value in listed)``:
    a kernel wrong at one residue only above the largest listed value is caught.

    1. Residues of shapes already drawn, per dim (in the order of the shapes' keys): the ``top``
       largest values of ``derived`` each get a residue, the assignment that gives the most
       residues a large value, then the largest value of each residue over ``listed`` and
       ``derived`` (the smallest of the three first: a kernel wrong at one residue above a
       threshold is caught up to that residue's largest value), then the fewest changes. A value
       only moves down, to the nearest value of its residue that its constraints allow
       (:func:`fit`), by less than 8 multiples, never across ``low``, ``L`` or
       :data:`THRESHOLD_DIM` (so every budget, the 4096 crossing and the pair products hold);
       an assignment making two shapes equal is not taken.
    2. For each (dim, residue) still without a large value: a value drawn from the run ``seed``
       (log-uniform in ``[L, max(L, min(high, 2 L))]``: large, and small enough for several
       dims to pack into one shape; given that residue, the nearest at least ``L``),
       with ``pack`` put into the first added shape that has no large value of that dim yet, whose
       value there has the same :func:`spec_key`, when the shape still ``fits`` (a memory and work
       budget per hardware target: the one of :func:`joint_shapes`), else a new shape: with
       ``pack`` on a tuple of keys a shape of ``listed``, ``derived`` or the added ones has, the
       other dims at that tuple's smallest values (:func:`key_value`: no new JIT compile,
       cost11), when one fits; otherwise with every other dim at its smallest value in ``listed``
       and ``derived`` (with ``above_listed``: its smallest allowed value, so that an
       interpreter's shape of one large dim has about ``L`` elements); left out when even that
       does not fit.

    With ``cover`` below ``len(RESIDUES)`` (:data:`RESIDUE_PLAN`, the interpreter), a dim is to
    reach only the first ``cover - 1`` residues (odd first) and one of the others, in turn with
    ``seed +`` the index of the dim: step 1 assigns only those (the fewest changes before the
    largest values, so an odd value already drawn stays), step 2 adds only those. With ``cover``
    2 every dim gets a large odd value and a large 2 mod 4 or 4 mod 8 one, and seeds s and s + 1
    together give it all three.

    ``listed``/``derived``: dicts of named positive dims with the same names. ``constraints``:
    per dim ``min``/``multiple_of``. Returns the new ``derived`` (same order, same length) followed
    by the added shapes; none equal to a listed shape or to each other.
    """
    import itertools

    listed = [dict(s) for s in listed]
    out = [dict(s) for s in derived]
    names = list((listed or out)[0])
    mults = {n: int((constraints or {}).get(n, {}).get("multiple_of", 1)) for n in names}
    large = {n: max(low, 1 + max(s[n] for s in listed)) if above_listed else low for n in names}

    def covered(n, shapes):
        return {residue(s[n], mults[n]) for s in shapes if s[n] >= large[n]} & set(RESIDUES)

    def wanted(i):
        """The residues dim ``i`` is to reach: all, or with ``cover`` below 3 the first ``cover - 1``
        (odd first) and one of the others in turn with the seed and the dim."""
        rest = RESIDUES[cover - 1:]
        return RESIDUES[:cover - 1] + (rest[(seed + i) % len(rest)],) if cover < len(RESIDUES) else RESIDUES

    for dim, n in enumerate(names):
        marks = (low, large[n], THRESHOLD_DIM + 1)
        order = sorted(range(len(out)), key=lambda i: -out[i][n])[:top]

        def moved(v, r):
            if residue(v, mults[n]) == r:
                return v
            d = with_residue(v, r, mults[n])
            ok = d >= 1 and fit(n, d, constraints) == d and all(d >= m for m in marks if v >= m)
            return d if ok else None

        best = None
        for assign in itertools.product(wanted(dim), repeat=len(order)):
            values = [moved(out[i][n], r) for i, r in zip(order, assign)]
            if None in values:
                continue
            trial = [dict(s) for s in out]
            for i, v in zip(order, values):
                trial[i][n] = v
            if any(trial[i] in listed + trial[:i] + trial[i + 1:] for i in order):
                continue
            tops = sorted(max([s[n] for s in listed + trial if residue(s[n], mults[n]) == r], default=0)
                          for r in RESIDUES)
            changes = -sum(t != o for t, o in zip(trial, out))
            key = (len(covered(n, listed + trial)), tops, changes) if cover >= len(RESIDUES) else \
                (len(covered(n, listed + trial)), changes, tops)  # the interpreter: the fewest changes first
            if best is None or key > best[0]:
                best = (key, trial)
        if best is not None:
            out = best[1]

    digest = hashlib.sha256(repr((seed, "residues", [sorted(s.items()) for s in listed + out])).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    every = listed + out
    base = {n: fit(n, 1, constraints) if above_listed else fit(n, min(s[n] for s in every), constraints)
            for n in names}
    added: List[Dict[str, int]] = []
    holds: List[set] = []  # the dims each added shape gives a large value
    for i, n in enumerate(names):
        # drawn for every residue in turn (the same draws whatever ``cover`` leaves out)
        draws = {r: int(math.exp(rng.uniform(math.log(large[n]), math.log(max(large[n], min(high, 2 * large[n]))))))
                 for r in RESIDUES}
        for r in wanted(i):
            if r in covered(n, every + added):
                continue
            drawn = draws[r]
            value = with_residue(drawn, r, mults[n])
            if value < large[n]:
                value = with_residue(large[n], r, mults[n], up=True)
            if fit(n, value, constraints) != value:
                continue
            # packed into the first added shape without a large value of this dim, within the budget
            # (and, packed, with the value's specialisation key at this dim: its tuple of keys stays)
            home = next((k for k, a in enumerate(added) if pack and n not in holds[k]
                         and spec_key(a[n]) == spec_key(value)
                         and fits(dict(a, **{n: value}))
                         and dict(a, **{n: value}) not in every + added), None)
            if home is not None:
                added[home][n] = value
                holds[home].add(n)
                continue
            shape = dict(base, **{n: value})
            if pack:  # on a tuple of keys a shape already has (no new compile), the others at its smallest values
                shape = _on_paid_tuple(names, n, value, every + added, fits, constraints) or shape
            if fits(shape) and shape not in every + added:
                added.append(shape)
                holds.append({n})
    return out + added


def _on_paid_tuple(names: Sequence[str], n: str, value: int, shapes: Sequence[Dict[str, int]], fits: Callable,
                   constraints: Optional[Constraints]) -> Optional[Dict[str, int]]:
    """A shape with dim ``n`` at ``value`` and every other dim at the smallest value
    (:func:`key_value`) of its key in a tuple of :func:`spec_key` keys one of ``shapes`` has and
    whose dim ``n`` has ``value``'s key: the one with the fewest elements that ``fits`` and is none
    of ``shapes``; None when there is none."""
    best = None
    for keys in dict.fromkeys(tuple(spec_key(s[m]) for m in names) for s in shapes):
        if keys[names.index(n)] != spec_key(value):
            continue
        trial = {m: value if m == n else key_value(m, key, constraints) for m, key in zip(names, keys)}
        if None in trial.values() or not fits(trial) or trial in shapes:
            continue
        if best is None or math.prod(trial.values()) < math.prod(best.values()):
            best = trial
    return best


#: The classes of higher 2-adic valuation every dim reaches at a large value on a GPU
#: (references/VERIFICATION.md, rule 12), as ``(r, modulus)``: the value (of a dim with
#: ``multiple_of`` m: the value / m) is ``r mod modulus`` -- 8 mod 16, 16 mod 32, 32 mod 64,
#: 64 mod 128, 128 mod 256 (valuations 3 to 7: a kernel keyed on a tile of 16 to 256 with a
#: broken half tile), 256 mod 1024 (a multiple of 1024 plus 256: a wide path for multiples of
#: 256 that assumes a multiple of its 1024-element chunk), 512 mod 1024 and 1024 mod 2048
#: (valuations 9, 10). :data:`RESIDUES` gives 1, 2 and 4; the timing shapes (powers of two) the
#: valuations above 10.
VALUATION_CLASSES = ((8, 16), (16, 32), (32, 64), (64, 128), (128, 256), (256, 1024), (512, 1024), (1024, 2048))
#: A GPU plan's **long** value of each dim is at least this (past 2^16: the 4096-16384-65536
#: element chunks and tiles of row-wise kernels), odd, drawn log-uniformly below ``2 LONG_MIN``.
LONG_MIN = 2**16 + 1
#: The budget of :func:`extreme_shapes` on a GPU, as :data:`JOINT_PLAN`'s: the product of the dims
#: up to :data:`LARGE_DIM_PLAN`'s 2^30 (three dims of a few hundred fit together where the tensors
#: stay small: conv's C_in x C_out x H), the spec's ``work`` bytes up to 16 MiB per shape (each is
#: one more float64 reference and honest computation per candidate, and an ``allclose`` output
#: of up to 2^21 elements travels whole to the parent's audit: conv_relu_maxpool's 22 such shapes
#: move about 90 MiB in all), FLOPs as the joint shapes'. None on the interpreter: no such shapes.
EXTREME_PLAN = {"interpret": None, "gpu": (2**30, 2**24, 2**34)}
#: The huge shape (:func:`huge_shape`) has more elements than this: an int32 offset wraps there.
HUGE_ELEMENTS = 2**31
#: The huge shape is planned when the spec's ``work`` bytes at it times this (the input, its
#: clone, the poisoned block of twice its bytes, the output and the reference's: VERIFICATION.md
#: rules 1, 2) are at most :data:`HUGE_MEMORY_FRACTION` of the device's memory.
HUGE_COPIES = 4
HUGE_MEMORY_FRACTION = 0.6


#: The divisor JIT compilers specialise an integer argument on (Triton's ``tt.divisibility`` of
#: 16, Inductor's size hints): with 1 (a constant), the keys of :func:`spec_key`.
JIT_DIVISOR = 16


def spec_key(value: int) -> int:
    """The specialisation key of a size a JIT compiler compiles a kernel for: 1 for 1,
    :data:`JIT_DIVISOR` for its multiples, 0 for any other value (Triton 3.x's integer-argument
    keys; a tuple of them per shape is one compiled variant of a kernel taking the dims)."""
    return 1 if value == 1 else JIT_DIVISOR if value % JIT_DIVISOR == 0 else 0


def key_value(name: str, key: int, constraints: Optional[Constraints] = None) -> Optional[int]:
    """The smallest value of dim ``name`` its ``constraints`` allow (:func:`fit`) whose
    :func:`spec_key` is ``key`` (1, :data:`JIT_DIVISOR` or 0), or None when there is none (a key of
    1 for a dim whose ``min`` is above 1, a key of 0 for a dim that must be a multiple of 16)."""
    if key == 1:
        return 1 if fit(name, 1, constraints) == 1 else None
    v = fit(name, JIT_DIVISOR if key == JIT_DIVISOR else 2, constraints)
    for _ in range(64):  # the first allowed values in turn (a multiple_of steps them)
        if spec_key(v) == key:
            return v
        v = fit(name, v + 1, constraints)
    return None


def in_class(value: int, r: int, modulus: int, multiple_of: int = 1) -> bool:
    """True when ``value`` is ``multiple_of * u`` with ``u = r mod modulus``."""
    return value % multiple_of == 0 and (value // multiple_of) % modulus == r


def class_value(value: int, r: int, modulus: int, multiple_of: int = 1, up: bool = False) -> int:
    """The value nearest ``value`` -- at most it, or with ``up`` at least it -- that
    :func:`in_class` ``(r, modulus)``. 0 or below when there is none at most ``value``."""
    u = -(-value // multiple_of) if up else value // multiple_of
    u = u + (r - u) % modulus if up else u - (u - r) % modulus
    return u * multiple_of


def extreme_shapes(shapes: Sequence[Dict[str, int]], seed: int, fits: Callable[[Dict[str, int]], bool],
                   constraints: Optional[Constraints] = None, low: int = LARGE_MIN,
                   long_min: int = LONG_MIN) -> List[Dict[str, int]]:
    """Shapes a GPU plan adds so that every dim reaches the classes of :data:`VALUATION_CLASSES`
    at a large value and a **long** value (references/VERIFICATION.md, rule 12): the other
    planners give every dim odd, 2 mod 4 and 4 mod 8 values up to about 8192, so a kernel wrong
    only at 32 mod 64 (a half tile of a 64-wide K loop, redteam_s8 ms1), at multiples of 256 that
    are no multiple of 1024 (ss1) or only past 16384 columns (fs1) passed them all.

    Per dim (in the order of the shapes' keys), first its long value (odd, an odd multiple of its
    ``multiple_of``, log-uniform from the run ``seed`` in ``[long_min, 2 long_min)``), then one
    value of each class (log-uniform in ``[L, 1.25 L]`` from ``L``, the smallest value of the class at
    least ``low``, snapped down into the class, never below ``L``), each skipped when ``shapes``
    already reach it (a long value: at least ``long_min``; a class: at least ``low``). A value joins
    the first added shape that has no large value of that dim yet when that shape still ``fits``
    (a memory and work budget: the joint shapes', :data:`JOINT_PLAN`), trying the drawn value and
    then ``L``; else it starts a shape with every other dim at its smallest value in ``shapes``,
    and is left out when even that does not fit (attention's S x S at 65537). Packed, so a task of
    two dims needs about 10 new shapes, not 18.

    Packed by specialisation key (:func:`spec_key`; a JIT compiler -- Triton, Inductor --
    compiles a kernel again for every new tuple of keys, inside the protocol's time, once per
    config): every added shape has a tuple of keys fixed when it is made, and a value joins only
    a shape whose tuple has the value's key at its dim. A value that joins no shape starts one on
    a tuple some shape already has -- one of ``shapes`` (no compile) or of an earlier added shape
    (one compile for all of them) --, with every other dim at the smallest value of that tuple's
    key the constraints allow (:func:`key_value`: 1, 16, or the smallest value that is neither),
    the tuple whose shape has the fewest elements first; only when none ``fits`` does it start a
    shape with every other dim at its smallest value in ``shapes`` (a new tuple, which later
    values may reuse). Session 10 packed by the large values' keys alone: conv_relu_maxpool's
    304 x 304 x 304 x 2 x 2 (16, 16, 16, 0, 0) and six other new tuples cost a compile of every
    kernel that no listed, derived or timing shape needed (cost11: 7 -> 1 at seeds 0-2).

    ``shapes``: dicts of named positive dims, all with the same names (listed, derived and timing
    shapes). ``constraints``: per dim ``min``/``multiple_of`` (:func:`fit`). Returns new dicts,
    none equal to one of ``shapes`` or to each other.
    """
    digest = hashlib.sha256(repr((seed, "extremes", [sorted(s.items()) for s in shapes])).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "little"))
    names = list(shapes[0])
    mults = {n: int((constraints or {}).get(n, {}).get("multiple_of", 1)) for n in names}
    base = {n: fit(n, min(s[n] for s in shapes), constraints) for n in names}
    added: List[Dict[str, int]] = []
    holds: List[set] = []  # the dims each added shape gives a large value

    paid = [tuple(spec_key(s[n]) for n in names) for s in shapes]  # tuples compiled already, in order
    paid = list(dict.fromkeys(paid))
    tuples: List[tuple] = []  # the tuple of keys of each added shape (fixed when it is made)

    def taken(trial) -> bool:
        return trial in list(shapes) or trial in added

    def place(n: str, values: Sequence[int]) -> None:
        for k, a in enumerate(added):  # joins a shape whose tuple has the value's key at this dim
            if n in holds[k]:
                continue
            for v in values:
                trial = dict(a, **{n: v})
                if spec_key(v) == tuples[k][names.index(n)] and fits(trial) and not taken(trial):
                    added[k] = trial
                    holds[k].add(n)
                    return
        options = []  # a new shape on a tuple already paid for, the other dims at that tuple's smallest values
        for v in values:
            for keys in paid:
                if keys[names.index(n)] != spec_key(v):
                    continue
                fill = {m: key_value(m, key, constraints) for m, key in zip(names, keys) if m != n}
                if None in fill.values():
                    continue
                trial = dict(fill, **{n: v})
                trial = {m: trial[m] for m in names}
                if fits(trial) and not taken(trial):
                    options.append((math.prod(trial.values()), len(options), trial, keys))
            if options:
                break
        if options:
            _, _, trial, keys = min(options)
            added.append(trial)
            holds.append({n})
            tuples.append(keys)
            return
        shape = dict(base, **{n: values[0]})
        if fits(shape) and not taken(shape):
            added.append(shape)
            holds.append({n})
            tuples.append(tuple(spec_key(shape[m]) for m in names))
            if tuples[-1] not in paid:
                paid.append(tuples[-1])

    for n in names:
        m = mults[n]
        drawn = int(math.exp(rng.uniform(math.log(long_min), math.log(2 * long_min - 1))))
        value = max(odd_multiple(drawn, m), fit(n, long_min, constraints))
        if value % (2 * m) == 0:
            value += m  # an odd multiple of m
        if not any(s[n] >= long_min for s in list(shapes) + added) and fit(n, value, constraints) == value:
            place(n, [value])
    for r, modulus in VALUATION_CLASSES:
        for n in names:
            m = mults[n]
            if any(s[n] >= low and in_class(s[n], r, modulus, m) for s in list(shapes) + added):
                continue
            smallest = class_value(max(low, fit(n, 1, constraints)), r, modulus, m, up=True)
            drawn = int(math.exp(rng.uniform(math.log(smallest), math.log(1.25 * smallest))))
            value = max(smallest, class_value(drawn, r, modulus, m))
            values = [v for v in dict.fromkeys((value, smallest)) if fit(n, v, constraints) == v]
            if values:
                place(n, values)
    return added


def huge_shape(base: Dict[str, int], fits: Callable[[Dict[str, int]], bool],
               constraints: Optional[Constraints] = None, elements: int = HUGE_ELEMENTS) -> Optional[Dict[str, int]]:
    """``base`` (the timing shape) with every dim raised by a common factor, each odd (an odd
    multiple of its ``multiple_of``; a dim of 1 kept), to the first shape of more than
    ``elements`` elements (references/VERIFICATION.md, rule 12: an int32 element offset wraps past
    2^31, redteam_s8 fs2), or None when it does not ``fits`` (a memory budget: the spec's bytes at
    the shape, :data:`HUGE_COPIES`, :data:`HUGE_MEMORY_FRACTION` of the device's memory) or
    ``base`` has no dim above 1."""
    grow = [n for n, v in base.items() if v > 1]
    if not grow:
        return None
    t = (elements / math.prod(base.values())) ** (1.0 / len(grow))
    for _ in range(200):
        shape = dict(base)
        for n in grow:
            mult = int((constraints or {}).get(n, {}).get("multiple_of", 1))
            v = odd_multiple(math.ceil(base[n] * t), mult)
            shape[n] = v if v >= base[n] * t else v + 2 * mult
        if math.prod(shape.values()) > elements:
            return shape if fits(shape) and allowed(shape, constraints) else None
        t *= 1.0005
    return None
