"""Shapes the harness adds to a spec's verify shapes (references/VERIFICATION.md, rule 12).

Imported by the parent process (planning), so it needs no torch.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Dict, List, Sequence

#: A shape with a dimension above this many elements is always verified (:func:`derived_shapes`):
#: one block of 4096 elements is the commonest size a shape-specialised kernel gets away with.
THRESHOLD_DIM = 4096


def derived_shapes(shapes: Sequence[Dict[str, int]], seed: int, fresh: int = 2) -> List[Dict[str, int]]:
    """Shapes the harness adds to a spec's verify shapes (references/VERIFICATION.md, rule 12).

    * when no listed shape has a dim above :data:`THRESHOLD_DIM`: one listed shape with one dim
      raised to ``THRESHOLD_DIM + 1``, the choice with the fewest elements (more than 4096 elements
      and a row longer than 4096 -- the last dim on a tie --, still cheap on the interpreter);
    * ``fresh`` random ragged shapes drawn from the run ``seed``: every dim uniform in
      ``[1, largest value of that dim in shapes]``, made odd (so no power of 2 above 1), with no
      more elements than the largest listed shape; a candidate specialised to the listed shapes
      cannot know them in advance.

    ``shapes``: dicts of named positive dims, all with the same names. Returns new dicts, none
    equal to a listed shape or to each other.
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
                big = dict(s, **{n: THRESHOLD_DIM + 1})
                options.append((math.prod(big.values()), -i, big))
        big = min(options, key=lambda o: o[:2])[2]
        out.append(big)
        seen.append(big)
    limit = max(math.prod(s.values()) for s in shapes)
    for _ in range(fresh):
        for _attempt in range(50):
            cand = {n: min(top[n], rng.randint(1, top[n]) | 1) for n in names}
            if cand not in seen and math.prod(cand.values()) <= limit:
                out.append(cand)
                seen.append(cand)
                break
    return out

