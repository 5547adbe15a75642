"""Work formulas fitted from measurements: a function of a task's dims (FLOPs counted by
torch.utils.flop_counter, elements of the inputs, outputs and parameters) written as an
expression of the dims that kernelsynth.spec.evaluate reads.

Model: a sum of products with at most one *atom* per dim, where a dim's atoms are the forms in
which it appears in the traced tensors' extents -- the dim itself (``H``), an affine form
(``2 * H + 1``) or a floor form (``(H - 3) // 2 + 1``, a strided window), found by
:func:`axis_form` from the extents at several values of the dim. Measuring the function on a
grid (per dim, as many values as it has basis functions) determines every coefficient exactly
(a tensor-product interpolation in rational arithmetic, :func:`fit_grid`); the formula is then
checked at shapes off the grid by the caller, so a function outside the model is reported as
such, never approximated.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: An atom: (expression text, function of the dim's value).
Atom = Tuple[str, Callable[[int], int]]


def axis_form(dim: str, xs: Sequence[int], es: Sequence[int]) -> Optional[Atom]:
    """The form ``e(x)`` of a tensor extent that varies with ``dim``: ``a * x + b`` (a >= 1) or
    ``(x + b) // s + c`` (s >= 2: 2..8, or near the measured ratio of x to e), whichever reproduces every ``(x, e)`` measured; None when
    it is constant or neither fits."""
    pts = list(zip(xs, es))
    if len({e for _, e in pts}) <= 1:
        return None
    (x0, e0), (x1, e1) = pts[0], pts[1]
    if x1 != x0 and (e1 - e0) % (x1 - x0) == 0:
        a = (e1 - e0) // (x1 - x0)
        b = e0 - a * x0
        if a >= 1 and all(a * x + b == e for x, e in pts):
            return _affine_text(dim, a, b), (lambda x, a=a, b=b: a * x + b)
    xs_, es_ = [x for x, _ in pts], [e for _, e in pts]
    spread = (max(es_) - min(es_)) or 1
    ratio = (max(xs_) - min(xs_)) / spread  # about s for a floor form
    for s in sorted({s for s in range(max(2, int(ratio) - 2), int(ratio) + 3)} | set(range(2, 9))):
        if s < 2:
            continue
        for b in sorted(range(-s, s), key=abs):
            c = e0 - (x0 + b) // s
            if all((x + b) // s + c == e for x, e in pts):
                inner = dim if b == 0 else f"({dim} {'+' if b > 0 else '-'} {abs(b)})"
                text = f"{inner} // {s}" + ("" if c == 0 else f" {'+' if c > 0 else '-'} {abs(c)}")
                return text, (lambda x, s=s, b=b, c=c: (x + b) // s + c)
    return None


def _affine_text(dim: str, a: int, b: int) -> str:
    t = dim if a == 1 else f"{a} * {dim}"
    return t if b == 0 else f"{t} {'+' if b > 0 else '-'} {abs(b)}"


def rank(rows: List[List[Fraction]]) -> int:
    m = [list(r) for r in rows]
    rank, cols = 0, len(m[0]) if m else 0
    for c in range(cols):
        piv = next((i for i in range(rank, len(m)) if m[i][c] != 0), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        for i in range(len(m)):
            if i != rank and m[i][c] != 0:
                f = m[i][c] / m[rank][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[rank])]
        rank += 1
    return rank


def _inverse(mat: List[List[Fraction]]) -> List[List[Fraction]]:
    n = len(mat)
    m = [list(r) + [Fraction(int(i == j)) for j in range(n)] for i, r in enumerate(mat)]
    for c in range(n):
        piv = next(i for i in range(c, n) if m[i][c] != 0)
        m[c], m[piv] = m[piv], m[c]
        p = m[c][c]
        m[c] = [v / p for v in m[c]]
        for i in range(n):
            if i != c and m[i][c] != 0:
                f = m[i][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[c])]
    return [r[n:] for r in m]


def grid_values(atoms: List[Atom], candidates: Sequence[int]) -> Optional[List[int]]:
    """As many values from ``candidates`` as the basis ``[1] + atoms`` has functions, chosen so
    that the basis evaluated at them is invertible; None when the candidates do not allow it."""
    basis = [lambda x: 1] + [f for _, f in atoms]
    chosen: List[int] = []
    for x in candidates:
        if x in chosen:
            continue
        trial = chosen + [x]
        if rank([[Fraction(f(v)) for f in basis] for v in trial]) == len(trial):
            chosen = trial
        if len(chosen) == len(basis):
            return chosen
    return None


def fit_grid(dims: List[str], atoms: Dict[str, List[Atom]], values: Dict[str, List[int]],
             measure: Callable[[Dict[str, int]], float]) -> str:
    """The formula (text) of ``measure`` in the basis of ``atoms``, from its values at every
    point of the grid ``values`` (per dim, one value per basis function). Coefficients are exact
    rationals; a zero function gives ``"0"``."""
    shape = [len(values[d]) for d in dims]
    grid = np.empty(shape, dtype=object)
    for idx in itertools.product(*(range(n) for n in shape)):
        point = {d: values[d][i] for d, i in zip(dims, idx)}
        grid[idx] = Fraction(measure(point)).limit_denominator(1 << 20)
    coef = grid
    for axis, d in enumerate(dims):
        basis = [lambda x: 1] + [f for _, f in atoms[d]]
        inv = np.array(_inverse([[Fraction(f(v)) for f in basis] for v in values[d]]), dtype=object)
        coef = np.moveaxis(np.tensordot(inv, np.moveaxis(coef, axis, 0), axes=(1, 0)), 0, axis)
    terms = []
    for idx in itertools.product(*(range(n) for n in shape)):
        c = coef[idx]
        if c == 0:
            continue
        factors = []
        for d, j in zip(dims, idx):
            if j:
                text = atoms[d][j - 1][0]
                factors.append(text if text.isidentifier() else f"({text})")
        terms.append((c, factors))
    if not terms:
        return "0"
    out = []
    for c, factors in terms:
        num, den = c.numerator, c.denominator
        mag = abs(num)
        body = " * ".join(([str(mag)] if mag != 1 or not factors else []) + factors)
        if den != 1:
            body = f"{body} / {den}"
        out.append(("- " if num < 0 else "+ ") + body)
    text = " ".join(out)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]
