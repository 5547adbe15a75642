"""Worker processes: the only place CUDA (or the Triton interpreter) is initialised.

:class:`WorkerPool` starts ``n`` processes (a fresh interpreter each, ``python -c``, so the
parent's state never leaks in), each inside the sandbox of :mod:`kernelsynth.sandbox` when it
works here (bubblewrap: no network, PID namespace, read-only filesystem, scrubbed environment,
resource limits), and runs jobs -- functions of :mod:`kernelsynth.jobs` called by name -- on
them over a socket pair (``multiprocessing.connection.Connection``, pickled messages; the parent
unpickles a worker's message with only :data:`RESULT_CLASSES` resolvable, :func:`load_message`:
the worker runs untrusted code, and a plain ``pickle.loads`` would run any callable it names in
the parent). Whatever a job does, the parent gets a :class:`JobResult`:

* ``ok``: the function returned;
* a fault class (:class:`kernelsynth.contract.Fault`) when it did not: ``compile_error``, ``exception``, ``tampering`` (the candidate
  replaced a function of torch, triton or the harness, or the worker's message named a class
  outside :data:`RESULT_CLASSES`), ``cuda_error`` (an illegal
  memory access or other sticky CUDA error), ``oom``, ``exit_called`` (sys.exit), ``crashed``
  (the process died: a signal or os._exit), ``timeout`` (no answer within the per-job limit),
  ``sandbox`` (the containment denied something or a limit was reached: a write to a read-only
  or hidden path, a connect without network, a fork past RLIMIT_NPROC, a file past RLIMIT_FSIZE,
  a full scratch, too many open files; or a candidate left processes running after its job).

After ``cuda_error``, ``crashed``, ``timeout``, ``exit_called``, ``tampering`` and ``sandbox`` the worker is killed and replaced, so the next
job starts on a clean CUDA context. So is a worker whose job's request has ``fresh_worker`` set
(the parent's decision: every external candidate's), and one whose job's result has ``recycle_worker`` set
(:func:`kernelsynth.jobs.evaluate` does after torch.compile baselines and after candidates that
left Python threads running: torch.compile's compile pool starts timer threads later, and the
next candidate's thread check would blame them on it). See references/EXPLORATION.md, "Isolation".
"""

from __future__ import annotations

import dataclasses
import errno
import importlib
import io
import json
import logging
import multiprocessing as mp
import os
import pickle
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from .contract import RESTART_FAULTS, Fault
from .sandbox import Sandbox, kill_tagged, worker_environment
from .verify.failures import TamperingError

log = logging.getLogger(__name__)

#: errno values by which the sandbox (or a resource limit) denies something (fault ``sandbox``):
#: read-only filesystem, permission, no network (or nothing listening), past RLIMIT_FSIZE / RLIMIT_NOFILE / RLIMIT_NPROC,
#: the private /tmp full.
SANDBOX_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH,
                  errno.ECONNREFUSED,  # loopback of the sandbox's own network namespace: nothing listens
                  errno.EFBIG, errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOSPC, errno.EDQUOT}


@dataclasses.dataclass
class JobResult:
    """What one job produced. ``value`` when ``fault`` is ``Fault.OK``; else ``error`` holds the message."""

    fault: Fault
    value: Any = None
    error: str = ""
    seconds: float = 0.0
    #: the job asked for a fresh process after it (its result's ``recycle_worker``): it left
    #: threads, hooks or compile pools behind that would be blamed on the next job
    recycle: bool = False
    #: what the worker staged for the shared compile cache during the job, and its cache
    #: counters (:func:`kernelsynth.cache.collect_staged`); taken out by the pool
    staged: Optional[Dict[str, Any]] = None
    #: the index of the device the job ran on (kernelsynth/devices.py), set by the pool in the
    #: parent; None: an unpinned worker
    device: Optional[int] = None
    #: whether the job held its GPU's lock (kernelsynth/gpulock.py): None when it takes none (a
    #: job without a lock mode, no cache root, the interpreter), False when its lock file could
    #: not be opened (its GPU work, a timing included, was not guarded)
    gpu_lock: Optional[bool] = None
    #: why the lock file could not be opened, when ``gpu_lock`` is False (gpulock.GpuLock.error)
    gpu_lock_error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.fault is Fault.OK


def _sandbox_denial(exc: BaseException) -> bool:
    """True when ``exc`` or an exception in its chain (``__cause__``/``__context__``) is an
    OSError with one of :data:`SANDBOX_ERRNOS`, or a failed name lookup (no network)."""
    import socket

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, socket.gaierror) or (isinstance(exc, OSError) and exc.errno in SANDBOX_ERRNOS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def classify(exc: BaseException) -> Fault:
    """Map an exception raised inside a worker to a fault class (see module docstring)."""
    if isinstance(exc, SystemExit):
        return Fault.EXIT_CALLED
    if isinstance(exc, TamperingError):
        return Fault.TAMPERING
    if _sandbox_denial(exc):
        return Fault.SANDBOX
    name = type(exc).__name__
    text = str(exc)
    low = text.lower()
    if name == "OutOfMemoryError" or any(m in low for m in ("out of memory", "not enough memory",
                                                             "can't allocate memory", "cannot allocate memory")):
        return Fault.OOM
    if name in ("CompilationError", "CompileTimeAssertionFailure", "InterpreterError") or "compil" in type(exc).__module__:
        return Fault.COMPILE_ERROR
    if "CUDA error" in text or "illegal memory access" in text or "unspecified launch failure" in text \
            or "AcceleratorError" in name:
        return Fault.CUDA_ERROR
    return Fault.EXCEPTION


def finished(value: Any, seconds: float) -> JobResult:
    """The result of a job that returned ``value``: recycled when the value's ``recycle_worker``
    field says so (:class:`kernelsynth.contract.EvaluateResult`); nothing is taken out of it."""
    return JobResult(Fault.OK, value, seconds=seconds, recycle=bool(getattr(value, "recycle_worker", False)))


def _worker_entry(fd: int, limits_json: str) -> None:
    """The worker process's start (``python -c``): SIGINT ignored (Ctrl-C reaches the whole
    process group when unsandboxed: the parent handles it), limits and uid (kernelsynth.sandbox),
    then the job loop on the inherited socket ``fd``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # cwd is the scratch a candidate can write
    from .sandbox import enter_worker, kill_descendants

    limits = json.loads(limits_json)
    enter_worker(limits)
    # entries this uid cannot read (a private cwd the parent ran from) would make package searches
    # (Triton's nvidia/ include lookup) fail with PermissionError instead of "not found"
    sys.path[:] = [p for p in sys.path if os.access(p, os.R_OK | os.X_OK)]
    try:
        _worker_main(Connection(fd), {}, limits)
    finally:
        if not limits.get("sandboxed"):
            kill_descendants()  # in the sandbox, the PID namespace ends with this process


def _worker_main(conn: Connection, env: Dict[str, str], limits: Optional[Dict[str, Any]] = None) -> None:
    os.environ.update(env)
    # kernelsynth.jobs is imported after the environment is set (TRITON_INTERPRET must come first),
    # now, so that a spare worker started ahead has its imports done before its first job; a worker
    # started for the hardware probe alone (PROBE_ONLY_ENV, engine.probe_hardware) skips its
    # torch._dynamo and harness imports until a job other than the probe comes (kernelsynth/hwprobe.py)
    jobs = None if os.environ.get(PROBE_ONLY_ENV) == "1" else importlib.import_module(".jobs", __package__)
    from .cache import collect_staged
    from .gpulock import job as gpu_job
    from .sandbox import kill_namespace_leftovers, leftover_processes, refuse_foreign_signals, start_job

    refuse_foreign_signals()  # a candidate may not signal the run (its parent) or the process group

    while True:
        try:
            msg = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if msg is None:
            return
        name, payload = msg
        if limits:
            start_job(limits)
        start = time.perf_counter()
        lock = None
        try:
            if name == "probe" and jobs is None:
                from .hwprobe import probe as job
            else:
                jobs = jobs or importlib.import_module(".jobs", __package__)
                job = getattr(jobs, name)
            with gpu_job(name) as lock:  # the GPU's cross-process lock (kernelsynth/gpulock.py)
                value = job(payload)
            result = finished(value, time.perf_counter() - start)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes an observation
            fault = classify(exc)
            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            result = JobResult(fault, error=f"{type(exc).__name__}: {exc}"[:2000] + "\n" + tb[-4000:],
                               seconds=time.perf_counter() - start)
        sandboxed = bool(limits and limits.get("sandboxed"))
        left = leftover_processes(sandboxed)
        if sandboxed:
            kill_namespace_leftovers()  # also what the count could not see
        if left:
            # a kernel has no reason to leave processes behind; the worker ends (and with it, in the
            # sandbox, its PID namespace and everything in it) instead of running the next job
            result.recycle = True
            role = getattr(getattr(payload, "candidate", None), "role", None)  # a JobRequest's candidate
            if name == "evaluate" and role not in (None, "baseline") and result.ok:
                result = JobResult(Fault.SANDBOX, error=f"the candidate left {len(left)} process(es) running after its "
                                   f"job ({', '.join(left[:5])}); they were killed with its worker",
                                   seconds=result.seconds, recycle=True)
        # ``opened``, not ``active``: the lock is closed by now (session 11: every GPU job of the H200
        # runs was reported unlocked because this read ``active`` after the close)
        result.gpu_lock = None if lock is None or lock.path is None else lock.opened
        result.gpu_lock_error = getattr(lock, "error", None)
        try:
            result.staged = collect_staged()  # new compile outputs, for the parent to validate
        except Exception as exc:  # noqa: BLE001 - the cache is an optimisation; the result still goes
            result.staged = {"refused": [("staging", f"could not be read: {exc}"[:300])]}
        try:
            try:
                conn.send(plain(result))
            except (BrokenPipeError, ConnectionError):
                raise
            except Exception:  # the result itself could not be pickled
                conn.send(JobResult(Fault.EXCEPTION, error="job result could not be sent to the parent"))
        except (BrokenPipeError, ConnectionError, EOFError):
            return  # the parent is gone (killed, interrupted): an orphan leaves quietly
        if result.fault in RESTART_FAULTS or result.recycle:
            return


#: What a worker's message may contain besides plain data (the only classes the parent's
#: unpickler resolves): a pickle naming any other callable (``os.system``, ``builtins.eval``, a
#: torch rebuild function) would run it in the parent, outside the sandbox.
RESULT_CLASSES = {("kernelsynth.workers", "JobResult"), ("kernelsynth.contract", "Fault"),
                  ("kernelsynth.contract", "EvaluateResult")}
#: Not ``collections.OrderedDict`` either: built by a call (REDUCE) from a list of pairs, its keys
#: escape the unpickler's str-key check, and colliding int keys stalled the parent as hash_flood did
#: (tests/adversarial/sandbox_s8 odict_flood); :func:`plain` sends every dict as a plain one.
#: No numpy class (tests/adversarial/sandbox_s7: a doctored ``numpy.dtype`` state made the parent
#: read raw bytes as an object pointer and crash, a 67-byte ``numpy`` scalar allocated 3 GiB), no
#: set, frozenset or complex (built from a list in C: a hash flood). Results carry plain Python
#: values; the worker converts numpy scalars before sending (:func:`plain`).

#: The most items one dict of a worker's message may have (results have at most a few hundred).
MAX_DICT_ITEMS = 1 << 16


class ForgedMessage(Exception):
    """A worker's message that names a class outside :data:`RESULT_CLASSES`, has a dict key that is
    not a str or a dict past :data:`MAX_DICT_ITEMS` (or does not unpickle)."""


class _ResultUnpickler(pickle._Unpickler):  # the Python unpickler: its dispatch table can be checked
    """Only :data:`RESULT_CLASSES` resolvable, and every dict key a str: keys of other types can be
    chosen to collide (integers k * (2^61 - 1) all hash to 0), and inserting n of them costs n^2/2
    comparisons with the GIL held, which stalled every thread of the parent for 60 s
    (tests/adversarial/sandbox_s7 hash_flood). A str's hash is salted per process (the worker does
    not get PYTHONHASHSEED). Pure Python, so slower than the C unpickler per opcode; a result has a
    few thousand opcodes (its raw outputs are single ``bytes`` opcodes)."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def find_class(self, module: str, name: str):
        if (module, name) not in RESULT_CLASSES:
            raise ForgedMessage(f"the worker's message names {module}.{name}, which the parent does not unpickle")
        return super().find_class(module, name)

    @staticmethod
    def _check(target, keys) -> None:
        if not isinstance(target, dict):
            return  # SETITEM on an object built by REDUCE: only RESULT_CLASSES can be built
        for k in keys:
            if type(k) is not str:
                raise ForgedMessage(f"the worker's message has a dict key of type {type(k).__name__}, not str")
        if len(target) + len(keys) > MAX_DICT_ITEMS:
            raise ForgedMessage(f"the worker's message has a dict of more than {MAX_DICT_ITEMS} items")

    def _setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._check(self.stack[-1], [key])
        self.stack[-1][key] = value

    def _setitems(self):
        items = self.pop_mark()
        self._check(self.stack[-1], items[0::2])
        d = self.stack[-1]
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]

    def _no_sets(self):
        raise ForgedMessage("the worker's message builds a set, which results never have")

    dispatch[pickle.SETITEM[0]] = _setitem
    dispatch[pickle.SETITEMS[0]] = _setitems
    for _op in (pickle.EMPTY_SET, pickle.ADDITEMS, pickle.FROZENSET):  # protocol 4+ sets need no class
        dispatch[_op[0]] = _no_sets
    del _op


def plain(value: Any) -> Any:
    """``value`` with numpy scalars turned into Python numbers (the parent refuses numpy classes),
    recursively through dicts, lists, tuples and dataclass fields; anything else unchanged."""
    mod = type(value).__module__
    if mod == "numpy" and hasattr(value, "item"):
        return value.item()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(plain(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            setattr(value, f.name, plain(getattr(value, f.name)))
    return value


def load_message(data: bytes) -> Any:
    """Unpickle a worker's message with only :data:`RESULT_CLASSES` resolvable; raises ForgedMessage."""
    try:
        return _ResultUnpickler(io.BytesIO(data)).load()
    except ForgedMessage:
        raise
    except Exception as e:  # noqa: BLE001 - a truncated or malformed pickle
        raise ForgedMessage(f"the worker's message does not unpickle: {type(e).__name__}: {e}"[:500]) from None


#: The longest result message the parent reads (raw outputs for the independent check are capped
#: by verify.transport.DIGEST_MAX_BYTES, staged cache entries at 512 MiB a job): a worker that
#: announces more gets a ``tampering`` result, and the parent buffers nothing.
MAX_MESSAGE_BYTES = 1 << 30


def _recv_before(w: "_Worker", deadline: float):
    """``w.conn.recv()`` (through :func:`load_message`: a message naming any other class is a
    ``tampering`` result), given up at ``deadline`` (time.monotonic): None then. A readable pipe
    does not mean a whole message (a candidate can write a length header and stop), and a plain
    recv would block the parent for good. Raises what recv raises (EOFError when the worker died)."""
    box: Dict[str, Any] = {}

    def read():
        try:
            data = w.conn.recv_bytes(MAX_MESSAGE_BYTES)
        except OSError as e:
            if "bad message length" not in str(e):
                box["error"] = e
                return
            # a length header past the cap: refused before anything is buffered
            w.proc.kill()
            box["value"] = JobResult(Fault.TAMPERING, error=f"a result message longer than {MAX_MESSAGE_BYTES} bytes "
                                     "(the cap): refused; worker replaced")
            return
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e
            return
        try:  # never plain pickle.loads: the message comes from untrusted code
            box["value"] = value = load_message(data)
            if isinstance(value, JobResult) and not (isinstance(value.error, str) and type(value.seconds) is float
                                                     and 0.0 <= value.seconds < 1e9):
                # the parent formats and stores both (sandbox_s8 jobresult_fields: an int error ended the run)
                raise ForgedMessage("the worker's JobResult has an error that is not a str or seconds that are "
                                    "not a float of at most 1e9")
        except ForgedMessage as e:
            box["value"] = JobResult(Fault.TAMPERING, error=f"{e}: a forged result; worker replaced")

    reader = threading.Thread(target=read, daemon=True, name="kernelsynth-recv")
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    if reader.is_alive():
        if w.proc.is_alive():
            w.proc.kill()  # the pipe's far end closes; the reader gets EOFError and ends
        reader.join(10)
        return None
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Process:
    """A worker's OS process (``subprocess.Popen``) with the part of ``multiprocessing.Process``
    the pool uses. ``exitcode`` is negative for a signal (bwrap reports 128 + signal)."""

    def __init__(self, popen: subprocess.Popen, sandboxed: bool, scratch: Optional[str], tag: Optional[str] = None):
        self.popen, self.sandboxed, self.scratch, self.tag = popen, sandboxed, scratch, tag

    @property
    def pid(self) -> int:
        return self.popen.pid

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        if self.is_alive():
            self.popen.kill()
        if self.sandboxed and self.tag:  # and the inner bwrap, if it was not armed yet (sandbox.kill_tagged)
            kill_tagged(self.tag)

    def join(self, timeout: Optional[float] = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    @property
    def exitcode(self) -> Optional[int]:
        rc = self.popen.poll()
        if rc is not None and self.sandboxed and 128 < rc < 128 + 65:
            return -(rc - 128)
        return rc


#: How much of a crashed worker's output its JobResult keeps.
OUTPUT_TAIL_BYTES = 4096

#: Set to "1" in the environment of a worker whose only job is the hardware probe
#: (kernelsynth.engine.probe_hardware): it imports kernelsynth.jobs only if another job comes.
PROBE_ONLY_ENV = "KERNELSYNTH_PROBE_ONLY"

_WORKER_PROGRAM = ("import sys; from kernelsynth.workers import _worker_entry; "
                   "_worker_entry(int(sys.argv[1]), sys.argv[2])")


class _Worker:
    def __init__(self, sandbox: Sandbox, env: Dict[str, str]):
        self.conn, child = mp.Pipe()  # a socket pair; the child's end is inherited by fd
        limits = sandbox.limits()
        scratch = None if sandbox.active else tempfile.mkdtemp(prefix="kernelsynth-worker-")
        home = "/tmp/home" if sandbox.active else scratch
        if sandbox.active:
            # the sandbox's filesystem is read-only outside its private /tmp (and the folders it makes
            # private): a compile-cache folder the user set (TORCHINDUCTOR_CACHE_DIR under the shared
            # cache or the hidden home, seen on the H200) would make `import torch._dynamo` fail in
            # every worker. Inductor's and Triton's caches go to the worker's scratch unless the job
            # names its own (kernelsynth's Triton cache manager and staging: kernelsynth/cache.py).
            env = {"TORCHINDUCTOR_CACHE_DIR": f"{home}/.cache/torchinductor",
                   "TRITON_CACHE_DIR": f"{home}/.triton/cache", **env}
        argv = [sys.executable, "-s", "-c", _WORKER_PROGRAM, str(child.fileno()), json.dumps(limits)]
        # the worker's stdout and stderr: an unnamed file of the parent's (not the run's terminal or
        # log, which a candidate could flood, forge lines in or read back: sandbox_s6
        # stdout_flood, fds_parent), bounded by the worker's RLIMIT_FSIZE; its tail explains a crash
        self.output = tempfile.TemporaryFile(prefix="kernelsynth-worker-output-")
        try:
            tag = secrets.token_hex(8)
            popen = subprocess.Popen(sandbox.command(argv, limits, tag=tag), pass_fds=(child.fileno(),),
                                     env=worker_environment(dict(os.environ), env, home),
                                     cwd=scratch or "/", stdin=subprocess.DEVNULL, stdout=self.output,
                                     stderr=subprocess.STDOUT)
        finally:
            child.close()
        self.proc = _Process(popen, sandbox.active, scratch, tag)
        self.job: Optional[Tuple[Optional[int], float]] = None  # (job index, start time); index None: a device check
        self.limit = 0.0  # the job's time limit, seconds
        self.slot = 0  # the pool slot it fills (WorkerPool.slots)
        self.jobs = 0  # jobs sent to it (a job with fresh_worker goes only to a worker that has run none)
        #: why this worker's staged compile outputs are not promoted (None: they are)
        self.taint: Optional[str] = None

    def output_tail(self, limit: int = OUTPUT_TAIL_BYTES) -> str:
        """The last ``limit`` bytes the worker (and bwrap) printed, as text ("" when none)."""
        try:
            size = os.fstat(self.output.fileno()).st_size
            self.output.seek(max(0, size - limit))
            return self.output.read(limit).decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def kill(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=10)
        self.conn.close()
        self.output.close()


#: Faults after which a pool with a device check (``check``) tests the device on a fresh worker
#: before its next job: the process died, CUDA failed, or nothing answered.
DEVICE_FAULTS = {Fault.CRASHED, Fault.CUDA_ERROR, Fault.TIMEOUT}
#: Longest a device check may take (a fresh worker's CUDA start and one small kernel).
CHECK_TIMEOUT_S = 120.0


class DevicesFailed(RuntimeError):
    """Every device of a pool failed its check (:attr:`WorkerPool.retired` says why) while jobs
    were left: raised by :meth:`WorkerPool.map`; the jobs already yielded stand."""


class WorkerPool:
    """``n`` spawned worker processes with a per-job timeout.

    ``env`` is added to each worker's scrubbed environment (for example ``{"TRITON_INTERPRET":
    "1"}``; :func:`kernelsynth.sandbox.worker_environment`). ``sandbox``: how workers are
    launched (default: :class:`~kernelsynth.sandbox.Sandbox` with its default settings, i.e.
    bubblewrap when it works here). Use as a context manager; :meth:`map` yields
    ``(index, JobResult)`` as jobs complete, in completion order.

    ``slots``: one entry per worker (then ``n`` is its length): a
    :class:`kernelsynth.devices.Device` the worker is pinned to (its ``env()``,
    ``CUDA_VISIBLE_DEVICES``, joins the worker's environment; a replacement keeps the slot's
    device) or None (unpinned). Every result's ``device`` is the index of the device its job ran
    on (set here, in the parent; None unpinned). :meth:`map`'s ``place`` keeps a job to one device.

    Failing devices: with ``check`` (the payload of :func:`kernelsynth.jobs.health`, e.g.
    ``{"cuda": True}``), a job on a pinned worker that ends ``crashed``, ``cuda_error`` or
    ``timeout`` (:data:`DEVICE_FAULTS`; the job's own result stands: it is yielded as it came) makes
    the device's next fresh worker run the health job before any other job. A device whose check
    fails ``device_checks`` times in a row is retired (:attr:`retired`: index -> why): its workers
    end, no job goes there again, and the other devices take the rest; a job placed on a retired
    device is yielded as ``crashed`` with that reason. When every device is retired and jobs are
    left, :meth:`map` raises :class:`DevicesFailed`. A failing GPU costs the jobs that ran on it,
    not the run.

    ``cache``: the run's shared compile cache (:class:`kernelsynth.cache.CompileCache`): its
    settings join every worker's environment, and what a job staged is handed to it with the
    job's result -- to be validated and promoted, or discarded when the worker is tainted: it ran
    an external candidate or TorchInductor's generated code (``role`` ``external`` or
    ``inductor``), or a job on it ended ``tampering`` or
    ``sandbox``, or failed the parent's ``recycle`` check (the independent check).
    """

    def __init__(self, n: int = 1, env: Optional[Dict[str, str]] = None, timeout_s: float = 600.0,
                 sandbox: Optional[Sandbox] = None, cache: Optional[Any] = None, slots: Optional[List[Any]] = None,
                 check: Optional[Dict[str, Any]] = None, device_checks: int = 2):
        self.slots: List[Any] = list(slots) if slots else [None] * max(1, int(n))
        self.n, self.env, self.timeout_s = len(self.slots), dict(env or {}), float(timeout_s)
        self.sandbox = sandbox if sandbox is not None else Sandbox()
        self.cache = cache
        if cache is not None:
            self.env |= cache.worker_env()
        self.check, self.device_checks = check, max(1, int(device_checks))
        #: device index -> why it was retired (its checks failed)
        self.retired: Dict[int, str] = {}
        #: the names of jobs that should have held their GPU's lock and could not (JobResult.gpu_lock)
        self.unlocked: List[str] = []
        #: the distinct reasons their lock files could not be opened (JobResult.gpu_lock_error)
        self.unlocked_errors: List[str] = []
        self._failed_checks: Dict[int, int] = {}
        self._needs_check: set = set()  # slots whose next worker runs the device check first
        #: one entry per slot; None: its worker was retired with no job left to run, and the slot
        #: starts a fresh one when the next job comes (:meth:`_revive`)
        self._workers: List[Optional[_Worker]] = []
        #: started ahead, one per device (None: unpinned), so replacing a worker costs no import time
        self._spares: Dict[Optional[int], _Worker] = {}

    def _device(self, slot: int) -> Optional[int]:
        d = self.slots[slot]
        return None if d is None else d.index

    def _new(self, slot: int) -> _Worker:
        d = self.slots[slot]
        w = _Worker(self.sandbox, self.env if d is None else {**self.env, **d.env()})
        w.slot = slot
        return w

    def __enter__(self) -> "WorkerPool":
        self._workers = []
        for i in range(self.n):
            self._workers.append(self._new(i))
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None:  # interrupted or failed: no waiting for jobs in flight
            for w in self._alive():
                w.kill()
            self._workers, self._spares = [], {}
        self.close()

    def _alive(self) -> List[_Worker]:
        """The started workers: every filled slot, then the spares."""
        return [w for w in self._workers + list(self._spares.values()) if w is not None]

    def close(self) -> None:
        for w in self._alive():
            try:
                if w.proc.is_alive():
                    w.conn.send(None)
                    w.proc.join(timeout=5)
            except Exception:
                pass
            w.kill()
        self._workers, self._spares = [], {}

    def run(self, name: str, payload: Any, device: Optional[int] = None, timeout_s: Optional[float] = None) -> JobResult:
        """Run one job and wait for it (on device ``device`` when given), within ``timeout_s``
        seconds (None: the pool's per-job limit); past it the job is a ``timeout`` result."""
        return next(iter(self.map(name, [payload], place=None if device is None else [device], limit=timeout_s)))[1]

    def usable(self) -> List[int]:
        """The slots whose device is not retired."""
        return [i for i in range(self.n) if self._device(i) not in self.retired]

    def retire(self, device: int, why: str) -> None:
        """Retire ``device`` (see class docstring) for ``why``: its idle workers and spare end now,
        a busy one when its job ends."""
        if device in self.retired:
            return
        self.retired[device] = why
        log.warning("cuda device %s retired: %s; its jobs go to the other devices", device, why)
        spare = self._spares.pop(device, None)
        if spare is not None:
            spare.kill()

    def map(self, name: str, payloads: Iterable[Any], on_start: Optional[Callable[[int], None]] = None,
            recycle: Optional[Callable[[int, JobResult], bool]] = None,
            place: Optional[List[Optional[int]]] = None, limit: Optional[float] = None) -> Iterator[Tuple[int, JobResult]]:
        """Run ``name`` on every payload; yield ``(index, JobResult)`` in completion order.
        ``recycle(index, result)``: the parent's own reason to replace the worker that ran a job
        (besides RESTART_FAULTS and ``result.recycle``), decided before the worker is reused.
        ``place[index]``: the device index job ``index`` must run on (None: any). ``limit``: seconds
        each job may take (None: the pool's ``timeout_s``)."""
        if not self._workers:
            self.__enter__()
        payloads = list(payloads)
        where = list(place) if place is not None else [None] * len(payloads)
        todo = list(range(len(payloads)))  # job indices in order; the first a slot can take goes next
        busy: Dict[Connection, _Worker] = {}
        idle = self.usable()[::-1]
        while todo or busy:
            yield from self._yield_unplaceable(todo, where)
            if todo and not busy and not any(self._device(i) not in self.retired for i in idle):
                raise DevicesFailed("every device of the run failed its check: " + "; ".join(
                    f"cuda device {d}: {why}" for d, why in sorted(self.retired.items())))
            for slot in list(idle)[::-1]:
                self._start_next(slot, name, payloads, where, todo, idle, busy, on_start, limit)
            if not busy:
                continue  # every job left is placed on a device that is now retired: yielded above
            deadline = min(w.job[1] + w.limit for w in busy.values())
            for conn in wait(list(busy), timeout=max(0.0, deadline - time.monotonic())):
                w = busy.pop(conn)
                idx, start = w.job
                result = self._receive(w, start)
                if getattr(result, "gpu_lock", None) is False:
                    self.unlocked.append(name if idx is not None else "health")
                    why = getattr(result, "gpu_lock_error", None)
                    if why and why not in self.unlocked_errors:
                        self.unlocked_errors.append(why)
                if idx is None:  # the device check
                    self._checked(w, result, idle, len(todo))
                    continue
                self._placed(result, self._device(w.slot))  # before the parent's check, which reads it
                parent_says = recycle is not None and recycle(idx, result)  # always asked: it may record things
                self._take_staged(w, payloads[idx], result, parent_says)
                # the request's fresh_worker is the parent's own decision: result.recycle is written in
                # the candidate's process, which could keep its worker for the next job by clearing it
                fresh = bool(getattr(payloads[idx], "fresh_worker", False))
                self._after_fault(w, result)
                if result.fault in RESTART_FAULTS or result.recycle or parent_says or fresh:
                    self._replace(w, len(todo))
                idle.append(w.slot)
                yield idx, self._placed(result, self._device(w.slot))
            yield from self._yield_timed_out(busy, idle, todo)

    def _yield_unplaceable(self, todo: List[int], where: List[Optional[int]]) -> Iterator[Tuple[int, JobResult]]:
        """Take out of ``todo`` and yield, as ``crashed``, the jobs placed on a device that is
        retired (or not in this pool): they cannot run."""
        devices = {self._device(i) for i in self.usable()}
        for idx in [j for j in todo if where[j] is not None and where[j] not in devices]:
            todo.remove(idx)
            why = self.retired.get(where[idx], "not a device of this pool")
            yield idx, self._placed(JobResult(Fault.CRASHED, error=f"cuda device {where[idx]} cannot run jobs: "
                                                                   f"{why}"), where[idx])

    def _next_for(self, slot: int, todo: List[int], where: List[Optional[int]]) -> Optional[int]:
        """The first job of ``todo`` that slot ``slot`` may run (unplaced, or placed on its device), or None."""
        return next((j for j in todo if where[j] is None or where[j] == self._device(slot)), None)

    def _start_next(self, slot: int, name: str, payloads: List[Any], where: List[Optional[int]], todo: List[int],
                    idle: List[int], busy: Dict[Connection, "_Worker"],
                    on_start: Optional[Callable[[int], None]], limit: Optional[float] = None) -> None:
        """Give idle slot ``slot`` its next piece of work: none when its device is retired (it
        leaves ``idle``), the device check when one is due, else the next job it may run (if any)."""
        if self._device(slot) in self.retired:
            idle.remove(slot)
            return
        if slot in self._needs_check:  # the device first shows it still works
            idle.remove(slot)
            w = self._workers[slot] or self._revive(slot)
            w = self._send(w, slot, "health", self.check, None, CHECK_TIMEOUT_S)
            busy[w.conn] = w
            return
        idx = self._next_for(slot, todo, where)
        if idx is None:
            return
        idle.remove(slot)
        todo.remove(idx)
        payload = payloads[idx]
        w = self._workers[slot] or self._revive(slot)
        if getattr(payload, "fresh_worker", False) and w.jobs:  # a process that has run no other job
            w = self._replace(w, len(todo) + 1)  # (rule 19: e.g. the reference memo, kernelsynth/verify/refmemo.py)
        w = self._send(w, slot, name, payload, idx, self.timeout_s if limit is None else float(limit),
                       queued=len(todo) + 1)
        w.jobs += 1
        cand = getattr(payload, "candidate", None)
        if name == "evaluate" and getattr(cand, "role", None) in ("external", "inductor") and w.taint is None:
            w.taint = f"ran the {cand.role} candidate {getattr(cand, 'name', '?')}"  # untrusted or generated code
        busy[w.conn] = w
        if on_start:
            on_start(idx)

    @staticmethod
    def _receive(w: "_Worker", start: float) -> JobResult:
        """The result of ``w``'s job (started at ``start``, monotonic s), read once its pipe is
        readable: a forged or incomplete message, a non-JobResult or a dead worker become the job's
        ``timeout``, ``exception`` or ``crashed`` result."""
        try:
            result = _recv_before(w, start + w.limit)
            if result is None:  # readable, but the message never completed: a forged header
                return JobResult(Fault.TIMEOUT, error=f"the worker's result did not arrive complete within "
                                 f"{w.limit:.0f} s of the job's start; worker killed", seconds=time.monotonic() - start)
            if not isinstance(result, JobResult) or not isinstance(result.fault, Fault):
                return JobResult(Fault.EXCEPTION, error=f"the worker sent {type(result).__name__}, not a JobResult "
                                 "with a Fault", seconds=time.monotonic() - start)
            return result
        except (EOFError, OSError):
            w.proc.join(timeout=5)
            code = w.proc.exitcode
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
            tail = w.output_tail()
            return JobResult(Fault.CRASHED, error=f"worker process {how} during the job"
                             + (f"; its last output:\n{tail}" if tail else ""), seconds=time.monotonic() - start)

    def _yield_timed_out(self, busy: Dict[Connection, "_Worker"], idle: List[int],
                         todo: List[int]) -> Iterator[Tuple[int, JobResult]]:
        """End the busy workers whose job ran past its limit: a device check counts as failed; a
        job is yielded as ``timeout`` and its slot gets a fresh worker."""
        now = time.monotonic()
        for conn, w in list(busy.items()):
            idx, start = w.job
            if now - start >= w.limit:
                del busy[conn]
                result = JobResult(Fault.TIMEOUT, error=f"no result within {w.limit:.0f} s; worker killed",
                                   seconds=now - start)
                if idx is None:
                    self._checked(w, result, idle, len(todo))
                    continue
                self._after_fault(w, result)
                self._replace(w, len(todo))
                idle.append(w.slot)
                yield idx, self._placed(result, self._device(w.slot))

    @staticmethod
    def _placed(result: JobResult, device: Optional[int]) -> JobResult:
        result.device = device  # the parent's fact, whatever the worker's message held
        return result

    def _send(self, w: _Worker, slot: int, name: str, payload: Any, idx: Optional[int], limit: float,
              queued: int = 1) -> _Worker:
        """Send one job to slot ``slot``'s worker (a fresh one when the pipe is broken)."""
        try:
            w.conn.send((name, payload))
        except (BrokenPipeError, OSError):
            w = self._replace(w, queued)
            try:
                w.conn.send((name, payload))
            except (BrokenPipeError, OSError):
                pass  # the fresh worker died too: reading its result ends in EOF, a crashed job
        w.job, w.limit = (idx, time.monotonic()), limit
        return w

    def _after_fault(self, w: _Worker, result: JobResult) -> None:
        """A pinned worker's job ended with a :data:`DEVICE_FAULTS` fault: its device is checked
        before the slot's next job (class docstring)."""
        if self.check is not None and self._device(w.slot) is not None and result.fault in DEVICE_FAULTS:
            self._needs_check.add(w.slot)

    def _checked(self, w: _Worker, result: JobResult, idle: List[int], queued: int) -> None:
        """The device check of slot ``w.slot`` ended: the slot takes jobs again, checks again on a
        fresh worker, or its device is retired after ``device_checks`` failures in a row."""
        slot, device = w.slot, self._device(w.slot)
        if result.ok:
            self._needs_check.discard(slot)
            self._failed_checks[device] = 0
            if result.recycle:
                self._replace(w, queued + 1)
        else:
            n = self._failed_checks[device] = self._failed_checks.get(device, 0) + 1
            first = (result.error or "").strip().splitlines()
            why = f"{n} device check(s) failed in a row, the last {result.fault.value}: {first[0] if first else ''}"[:500]
            if n >= self.device_checks:
                self.retire(device, why)
                self._needs_check.discard(slot)
                w.kill()
                self._workers[slot] = None
            else:
                log.warning("cuda device %s: check failed (%s); checking again on a fresh worker", device, why)
                self._replace(w, queued + 1)
        idle.append(slot)

    def _take_staged(self, w: _Worker, payload: Any, result: JobResult, parent_says: bool) -> None:
        """Hand what ``result``'s job staged to the cache (see class docstring), then drop it."""
        staged, result.staged = getattr(result, "staged", None), None
        if self.cache is None:
            return
        if w.taint is None and (result.fault in (Fault.TAMPERING, Fault.SANDBOX) or parent_says):
            w.taint = ("failed the parent's check of its result" if parent_says and result.fault is Fault.OK
                       else f"ran a job that ended {result.fault.value}")
        cand = getattr(payload, "candidate", None)
        job = " ".join(str(x) for x in (getattr(cand, "role", None), getattr(cand, "name", None),
                                        getattr(payload, "dtype", None)) if x) or "job"
        if cand is not None and getattr(cand, "config", None):
            job += " " + json.dumps(cand.config, sort_keys=True)
        self.cache.receive(staged, job, w.taint)

    def _replace(self, w: _Worker, queued: int) -> Optional[_Worker]:
        """Kill ``w`` and put a fresh worker in its slot (same device), for ``queued`` jobs still to
        be sent: the slot device's spare started at an earlier replacement (its imports done while
        other jobs ran) when there is one, else a new worker -- or none when nothing is queued (the
        slot is None and :meth:`_revive` fills it if a job comes: a worker started after the last
        job would only import torch to be closed). A next spare is started only when another job
        is queued beyond the one the new worker takes (``queued >= 2``)."""
        slot = w.slot
        w.kill()
        key = self._device(slot)
        spare = self._spares.pop(key, None)
        if spare is not None and spare.proc.is_alive():
            new: Optional[_Worker] = spare
            new.slot = slot
        else:
            if spare is not None:
                spare.kill()
            new = self._new(slot) if queued > 0 else None
        self._workers[slot] = new
        if queued >= 2 and key not in self.retired:
            self._spares[key] = self._new(slot)
        return new

    def _revive(self, slot: int) -> _Worker:
        """Fill slot ``slot``, which :meth:`_replace` left empty: with its device's spare when one
        is alive, else a new worker; returns it."""
        spare = self._spares.pop(self._device(slot), None)
        if spare is not None and spare.proc.is_alive():
            new = spare
            new.slot = slot
        else:
            if spare is not None:
                spare.kill()
            new = self._new(slot)
        self._workers[slot] = new
        return new
