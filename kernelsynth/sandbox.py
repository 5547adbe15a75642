"""Signal guard for worker processes (references/VERIFICATION.md, rule 16).

A candidate runs inside a worker, whose parent is the run itself: ``os.kill(os.getppid(), 9)``
would end the run, ``os.kill(0, 9)`` or ``os.killpg`` the whole process group (the shell, CI).
:func:`refuse_foreign_signals` replaces ``os.kill``/``os.killpg`` (and their ``posix``
originals) with versions that allow a signal only to this process or to one of its own
children (``subprocess`` timeouts kill their child), and raise ``PermissionError`` otherwise;
the candidate sees the exception, which rejects it. The replacements are in the integrity
guard's namespaces (``os``, ``posix``), so putting the originals back is tampering.

Out of reach (documented, not enforced): raw system calls through ``ctypes`` (``libc.kill``),
a ``kill`` command started with ``subprocess``, and the originals recovered through ``gc``.
Only an OS sandbox (a separate user, a PID namespace, seccomp) closes those.
"""

from __future__ import annotations

import os

_INSTALLED = {}


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def signal_allowed(pid: int) -> bool:
    """True if this process may signal ``pid``: itself, or a child it started (pid > 0)."""
    return pid == os.getpid() or (pid > 0 and _parent_of(pid) == os.getpid())


def refuse_foreign_signals() -> None:
    """Install the guard in this process (idempotent). ``os.kill(pid, sig)`` raises
    ``PermissionError`` unless :func:`signal_allowed`; ``os.killpg`` always raises."""
    import posix

    if _INSTALLED:
        return
    real_kill = os.kill

    def kill(pid: int, sig: int, /) -> None:
        if not signal_allowed(int(pid)):
            raise PermissionError(f"signal {sig} to pid {pid} refused: a candidate may signal only its own "
                                  "process and its children (kernelsynth.sandbox)")
        real_kill(pid, sig)

    def killpg(pgid: int, sig: int, /) -> None:
        raise PermissionError(f"signal {sig} to process group {pgid} refused: a candidate may not signal "
                              "process groups (kernelsynth.sandbox)")

    _INSTALLED.update(kill=real_kill, killpg=os.killpg)
    for mod in (os, posix):
        mod.kill, mod.killpg = kill, killpg
