"""Errors a user can fix. The CLI prints them as one message and exits non-zero, without a
traceback (``verbose=true`` shows it)."""

from __future__ import annotations

import difflib
from typing import Iterable, List


def closest(name: str, options: Iterable[str], n: int = 1, cutoff: float = 0.6) -> List[str]:
    """The (at most ``n``) options most like ``name``, best first, compared case-insensitively by
    ``difflib.get_close_matches`` (similarity ratio >= ``cutoff``, 0..1), returned as spelt in
    ``options``; [] when none is close. The "did you mean" of every error that names a wrong key,
    task or config option."""
    by_lower = {}
    for o in options:
        by_lower.setdefault(str(o).lower(), str(o))
    return [by_lower[m] for m in difflib.get_close_matches(str(name).lower(), list(by_lower), n=n, cutoff=cutoff)]


class UserError(Exception):
    """A mistake in the user's input: a spec, a config or a path. Printed without a traceback."""


class SpecError(UserError):
    """A task spec that cannot be used.

    The message names the file, the field (a dotted path such as ``shapes.verify[2]``), what was
    expected and what was found, then ``hint`` as given (e.g. " -- did you mean task=flip2d?").
    """

    def __init__(self, path, field: str, expected: str, got=None, hint: str = ""):
        self.path, self.field, self.expected, self.got, self.hint = str(path), field, expected, got, hint
        found = "" if got is None else f", got {got!r}"
        super().__init__(f"{self.path}: field '{field}': expected {expected}{found}{hint}")


class HardwareMismatchError(UserError):
    """The named hardware target is not the GPU this machine has."""


def reference_error(spec, why: str) -> SpecError:
    """The SpecError of a task whose reference (``spec.reference``) does not import in a worker or
    lacks ``Model``/``get_init_inputs``/``get_inputs``; ``why``: the worker's
    :func:`~kernelsynth.hwprobe.probe` ``reference_error``, put on one line and cut to
    :data:`MAX_WHY` characters (an exception message may be megabytes or many lines)."""
    why = " ".join(str(why).split())
    if len(why) > MAX_WHY:
        why = why[:MAX_WHY] + f"... ({len(why) - MAX_WHY} more characters)"
    return SpecError(spec.path, "reference", "a module that imports and defines Model, get_init_inputs "
                     f"and get_inputs ({spec.reference}: {why})")


#: The most characters of a worker's reason that :func:`reference_error` quotes.
MAX_WHY = 500
