"""Timings alone on their GPU: a cross-process reader-writer lock per physical GPU.

Several kernelsynth processes may share one GPU (runs started side by side, e.g.
``bench/h200_import.sh`` running tasks in parallel so that one task's CPU-bound compiles overlap
another's GPU work). A latency measured while another process's kernels run on the same GPU is
not the candidate's latency. So every GPU job of a worker holds its GPU's lock: shared for work
whose result does not depend on having the GPU alone (verification, the oracle, TorchInductor's
extraction, the health check), exclusive for measurements (the timed region of an evaluate job,
the ceilings). Shared holders run together; an exclusive holder runs alone: no timed region
overlaps another kernelsynth process's GPU job on that GPU, while verification and compiles of
several runs overlap freely.

The lock is ``flock(2)`` on ``<cache root>/gpu-locks/<key>.lock``, one file per GPU, with a
turnstile beside it (``<key>.lock.turn``) that gives a waiting exclusive holder precedence: it holds
the turnstile while it waits, and a new shared holder passes through the turnstile first, so a
stream of overlapping shared jobs cannot keep a timing waiting forever (it waits for the shared
jobs already running, at most). ``key`` is the
device's UUID as torch reports it (``torch.cuda.get_device_properties(i).uuid``; the probe's
``devices[].uuid``), so two processes that see one GPU under different indices
(``CUDA_VISIBLE_DEVICES``) share its lock, and two GPUs of one host never wait for each other.
The parent creates the files (:func:`prepare`, mode 0644): a sandboxed worker sees the cache
read-only, opens its file read-only, and ``flock`` needs no write access. With no file (no cache
root, a device the parent did not prepare, the Triton interpreter) nothing is locked.

Limits: only processes that share the cache root see each other's locks; a candidate runs in the
worker that holds the lock, so a hostile one can drop it (``flock(fd, LOCK_UN)`` on a guessed fd)
and run beside another run's timing, or hold it until its job's timeout; the Nsight Compute
profile step takes no lock (its worker initialises no CUDA, so it does not know its GPU's UUID).
CPU work of other processes (compiles) still runs beside a timed region: the lock protects the
GPU, not the host's cores. No torch at import.
"""

from __future__ import annotations

import fcntl
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, List, Optional

FOLDER = "gpu-locks"
SHARED, EXCLUSIVE, OPEN = "shared", "exclusive", "open"
#: How each worker job holds its GPU's lock (jobs not listed take none: ``probe``, which runs
#: before the parent prepared any file, and ``profile``, see the module docstring). An evaluate
#: job holds it shared and exclusive around its timed region (:func:`exclusive`). ``open``: the
#: job holds it only around its own GPU work (:func:`shared`): TorchInductor's extraction, whose
#: tens of seconds of tracing, code generation and Triton compiles run no kernel and would
#: otherwise keep every timing of the other runs waiting (kernelsynth/inductor_extract.py).
#: the worker's GPU UUID, set by the parent for a pinned worker (:func:`worker_lock_path`)
UUID_ENV = "KERNELSYNTH_GPU_UUID"

JOB_MODES = {"evaluate": SHARED, "oracle": SHARED, "inductor": OPEN, "health": SHARED, "ceilings": EXCLUSIVE}


def lock_path(cache_root: Path, key: str) -> Path:
    """The lock file of the GPU ``key`` (its UUID) under ``cache_root``; characters other than
    letters, digits, ``-`` and ``_`` become ``_``."""
    return Path(cache_root) / FOLDER / (re.sub(r"[^A-Za-z0-9_-]", "_", key) + ".lock")


def _turnstile(path: Path) -> Path:
    return path.with_name(path.name + ".turn")


def prepare(cache_root: Path, keys: Iterable[Optional[str]]) -> List[Path]:
    """Create (parent side) the lock file of each GPU in ``keys`` (None entries are skipped),
    mode 0644 in a 0755 folder; returns their paths. Raises OSError when the cache root cannot
    be written."""
    folder = Path(cache_root) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    out = []
    for key in keys:
        if not key:
            continue
        path = lock_path(cache_root, key)
        for f in (path, _turnstile(path)):
            if not f.exists():
                f.touch(mode=0o644)
            os.chmod(f, 0o644)
        out.append(path)
    return out


class GpuLock:
    """One process's hold on one GPU's lock file (``path``; None or missing: a no-op lock).
    :meth:`hold` takes it in a mode (blocking until granted), :meth:`release` drops it."""

    def __init__(self, path: Optional[Path]):
        self.path = path
        self.mode: Optional[str] = None
        self._fd: Optional[int] = None
        self._turn: Optional[int] = None
        #: why the lock file could not be opened (None: it was, or there is none)
        self.error: Optional[str] = None
        #: whether the lock file was opened (stays True after :meth:`close`, unlike :attr:`active`)
        self.opened = False
        if path is not None:
            try:
                self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                self._turn = os.open(_turnstile(path), os.O_RDONLY | os.O_CLOEXEC)
                self.opened = True
            except OSError as e:
                self.error = f"{e.filename or path}: {e.strerror or e} (errno {e.errno}, uid {os.getuid()})"
                # said on the worker's output and sent to the parent (JobResult.gpu_lock_error): not guarded
                print(f"kernelsynth gpulock: cannot open {path} ({e}); this job's GPU work takes no lock",
                      file=sys.stderr, flush=True)
                for fd in (self._fd, self._turn):
                    if fd is not None:
                        os.close(fd)
                self._fd = self._turn = None

    @property
    def active(self) -> bool:
        """Whether a lock file was opened (else every call is a no-op)."""
        return self._fd is not None

    def hold(self, mode: str) -> None:
        """Hold the lock ``shared`` or ``exclusive``, waiting for it. Changing mode is not atomic
        (flock(2) drops the old lock first): another process may take it in between."""
        if self._fd is not None:
            # never wait on the turnstile while holding the lock: two processes would wait on each other
            if mode == EXCLUSIVE:
                if self.mode is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                fcntl.flock(self._turn, fcntl.LOCK_EX)  # new shared holders wait behind this one
                try:
                    fcntl.flock(self._fd, fcntl.LOCK_EX)
                finally:
                    fcntl.flock(self._turn, fcntl.LOCK_UN)
            else:
                if self.mode is None:  # a new holder (not an exclusive one going back to shared)
                    fcntl.flock(self._turn, fcntl.LOCK_SH)  # passes unless an exclusive holder waits
                    fcntl.flock(self._turn, fcntl.LOCK_UN)
                fcntl.flock(self._fd, fcntl.LOCK_SH)
        self.mode = mode

    def release(self) -> None:
        """Drop the lock (for every process sharing the descriptor: a forked child too)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self.mode = None

    def close(self) -> None:
        self.release()
        for fd in (self._fd, self._turn):
            if fd is not None:
                os.close(fd)
        self._fd = self._turn = None


#: the lock the current worker job holds (set by :func:`job`), for :func:`exclusive`
_current: Optional[GpuLock] = None


def worker_lock_path() -> Optional[Path]:
    """In a worker: the lock file of its ``cuda:0`` (``$KERNELSYNTH_CACHE``/gpu-locks/<uuid>.lock),
    or None without a cache root, without CUDA or on the Triton interpreter. The UUID is
    ``$KERNELSYNTH_GPU_UUID`` when the parent set it (a pinned worker: devices.Device.env), so that
    the job holds the lock before CUDA starts in this process -- a context being created beside
    another run's timed region is GPU work outside every lock (session 12: side-by-side runs on
    one H200 got host-timed rejections of honest kernels, rule 17). Else it initialises CUDA to
    read the UUID."""
    root = os.environ.get("KERNELSYNTH_CACHE")
    if not root or os.environ.get("TRITON_INTERPRET") == "1":
        return None
    if os.environ.get(UUID_ENV):
        return lock_path(Path(root), os.environ[UUID_ENV])
    import torch

    if not torch.cuda.is_available():
        return None
    uuid = getattr(torch.cuda.get_device_properties(0), "uuid", None)
    return lock_path(Path(root), str(uuid)) if uuid is not None else None


@contextmanager
def job(name: str, path_of=None) -> Iterator[Optional[GpuLock]]:
    """Hold the GPU's lock for the worker job ``name`` in its :data:`JOB_MODES` mode (no lock for
    other jobs: yields None); ``path_of()`` gives the lock file (default: :func:`worker_lock_path`)."""
    global _current
    mode = JOB_MODES.get(name)
    if mode is None:
        yield None
        return
    lock = GpuLock((path_of or worker_lock_path)())
    if mode != OPEN:
        lock.hold(mode)
    _current = lock
    try:
        yield lock
    finally:
        _current = None
        lock.close()


@contextmanager
def exclusive() -> Iterator[None]:
    """Inside a job holding the lock shared: hold it exclusive for the block, then shared again
    (the timed region of an evaluate job). Outside any job: no lock."""
    lock = _current
    if lock is None:
        yield
        return
    before = lock.mode
    lock.hold(EXCLUSIVE)
    try:
        yield
    finally:
        lock.hold(before) if before else lock.release()


@contextmanager
def shared() -> Iterator[None]:
    """Inside an ``open`` job (:data:`JOB_MODES`): hold the lock shared for the block (the job's
    GPU work), then not at all. Inside a job already holding it, or outside any job: no change."""
    lock = _current
    if lock is None or lock.mode is not None:
        yield
        return
    lock.hold(SHARED)
    try:
        yield
    finally:
        lock.release()
