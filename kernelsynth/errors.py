"""Errors a user can fix. The CLI prints them as one message and exits non-zero, without a
traceback (``verbose=true`` shows it)."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input: a spec, a config or a path. Printed without a traceback."""


class SpecError(UserError):
    """A task spec that cannot be used.

    The message names the file, the field (a dotted path such as ``shapes.verify[2]``), what was
    expected and what was found.
    """

    def __init__(self, path, field: str, expected: str, got=None):
        self.path, self.field, self.expected, self.got = str(path), field, expected, got
        found = "" if got is None else f", got {got!r}"
        super().__init__(f"{self.path}: field '{field}': expected {expected}{found}")


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
