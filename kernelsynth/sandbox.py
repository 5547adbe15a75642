"""Containment of worker processes (SECURITY.md) and the signal guard (VERIFICATION.md, rule 16).

Launching: :class:`Sandbox` turns a worker's command line into one run by bubblewrap (``bwrap``,
Debian's ``bubblewrap`` package) when it works on this machine: no network (a new network
namespace), a PID namespace (every process a job starts dies with its worker), the filesystem
read-only (bwrap's /dev too), the run directory, the user's home, /run (unix sockets), container secrets
and the credential files the parent's environment names (:func:`credential_paths`) hidden (tmpfs over them),
a size-limited private ``/tmp`` (and ``/dev/shm``, limited alike) as the only writable place (the worker's scratch: HOME, the
staging folder of new compile outputs, Inductor's cache), the shared compile cache bound
read-only (kernelsynth/cache.py: only the parent writes it), a private tmpfs over the torch
extensions folder, all
capabilities dropped, and, when the run is root, a uid of its own per worker so that
``RLIMIT_NPROC`` bites. :func:`worker_environment` is the scrubbed environment (an allow-list);
:func:`enter_worker` sets the resource limits and drops the uid in the worker before anything
of the job is imported. Without bwrap the same launcher runs the worker unsandboxed (scrubbed
environment and limits still applied) and :attr:`Sandbox.status` says so.

Signal guard: a candidate runs inside a worker, whose parent is the run itself: ``os.kill(os.getppid(), 9)``
would end the run, ``os.kill(0, 9)`` or ``os.killpg`` the whole process group (the shell, CI).
:func:`refuse_foreign_signals` replaces ``os.kill``/``os.killpg`` (and their ``posix``
originals) with versions that allow a signal only to this process or to one of its own
children (``subprocess`` timeouts kill their child), and raise ``PermissionError`` otherwise;
the candidate sees the exception, which rejects it. The replacements are in the integrity
guard's namespaces (``os``, ``posix``), so putting the originals back is tampering.

Out of reach of the guard alone: raw system calls through ``ctypes`` (``libc.kill``), a ``kill``
command started with ``subprocess``, and the originals recovered through ``gc``. Inside the
bubblewrap sandbox those reach only the worker's own PID namespace (the run is not in it).
"""

from __future__ import annotations

import functools
import grp
import json
import os
import resource
import secrets
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

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


# ---------------------------------------------------------------------------------- environment
#: Variables passed to a worker when set in the parent (exact names), besides the prefixes below.
ENV_NAMES = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
             "CUDA_HOME", "CUDA_PATH", "CUDA_DEVICE_ORDER", "CC", "CXX", "NVCC", "OMP_NUM_THREADS",
             "MKL_NUM_THREADS", "KERNELSYNTH_CACHE", "PYTHONDONTWRITEBYTECODE"}
# (not PYTHONHASHSEED: with the parent's seed a worker could make str keys collide, workers._ResultUnpickler)
#: Prefixes passed to a worker: locale, Triton, torch's compile and build settings, CUDA and
#: NVIDIA driver settings (device selection, JIT cache, library paths).
ENV_PREFIXES = ("LC_", "TRITON_", "TORCH_", "TORCHINDUCTOR_", "CUDA_", "NVIDIA_", "PYTORCH_", "NVRTC_")
#: Never passed, whatever the prefix: credentials by name.
ENV_DENY = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION")


def worker_environment(parent: Dict[str, str], extra: Dict[str, str], home: str) -> Dict[str, str]:
    """The environment a worker starts from: the allow-listed variables of ``parent``
    (:data:`ENV_NAMES`, :data:`ENV_PREFIXES`) minus any whose name contains a credential word
    (:data:`ENV_DENY`), then ``extra`` (the job's settings, e.g. TRITON_INTERPRET), HOME and
    XDG_CACHE_HOME under ``home``, TMPDIR, and PYTHONPATH made of the parent's ``sys.path``
    (so the worker imports the same kernelsynth). Nothing else of the parent's environment
    (HF_TOKEN, HF_HOME, AWS_*, CI variables, ...) reaches a candidate."""
    env = {k: v for k, v in parent.items()
           if (k in ENV_NAMES or k.startswith(ENV_PREFIXES)) and not any(d in k.upper() for d in ENV_DENY)}
    env.update(extra)
    env["HOME"] = home
    env["XDG_CACHE_HOME"] = os.path.join(home, ".cache")
    env["TMPDIR"] = os.path.join(home, "tmp")
    env["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(sys.path) if p and os.path.isdir(p))
    env.setdefault("PATH", os.defpath)
    return env


# ---------------------------------------------------------------------------------- settings
@dataclass
class SandboxSettings:
    """``exploration.sandbox`` (the defaults, written once, are these fields); units in the names.

    ``mode``: ``auto`` (bubblewrap when it works here, else unsandboxed and said so), ``on``
    (refuse to run without it) or ``off``. ``bwrap``: path of the executable (else
    $KERNELSYNTH_BWRAP, else PATH). ``allow_unsandboxed_external``: screen external candidates
    (``exploration.extra_candidates``) even without the sandbox. Limits: processes and threads
    per worker uid (RLIMIT_NPROC), open files, bytes of one file (RLIMIT_FSIZE), CPU seconds of
    one job (RLIMIT_CPU soft; hard = ``cpu_s_worker``), size of the private /tmp in MiB.
    """

    mode: str = "auto"
    bwrap: Optional[str] = None
    allow_unsandboxed_external: bool = False
    nproc: int = 4096
    nofile: int = 4096
    fsize_mb: int = 2048
    cpu_s: int = 3600
    cpu_s_worker: int = 36000
    tmp_mb: int = 4096

    def __post_init__(self):
        if self.mode not in ("auto", "on", "off"):
            raise ValueError(f"exploration.sandbox.mode must be 'auto', 'on' or 'off', got {self.mode!r}")

    @classmethod
    def of(cls, value: Any) -> "SandboxSettings":
        """From a mapping (Hydra's DictConfig or a dict), a SandboxSettings, or None (defaults)."""
        if isinstance(value, cls):
            return value
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls(mode=value)
        return cls(**{k: v for k, v in dict(value).items()})


def find_bwrap(configured: Optional[str] = None) -> Optional[str]:
    """The bubblewrap executable: ``configured``, else $KERNELSYNTH_BWRAP, else ``bwrap`` on PATH."""
    for c in (configured, os.environ.get("KERNELSYNTH_BWRAP")):
        if c:
            return c if os.access(c, os.X_OK) else None
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def bwrap_problem(bwrap: str) -> Optional[str]:
    """None when ``bwrap`` can build the sandbox's namespaces here, else why not (its stderr).
    An interpreter under /tmp (a virtual environment there) is bound back read-only over the
    private /tmp, as :meth:`Sandbox.command` does."""
    back = []
    for p in dict.fromkeys(os.path.realpath(x) for x in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                          os.path.dirname(os.path.realpath(sys.executable)))):
        if _under(p, "/tmp") and p != "/tmp" and os.path.isdir(p) and not any(_under(p, b) for b in back):
            back.append(p)
    try:
        p = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                            *[a for b in back for a in ("--ro-bind", b, b)],
                            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session",
                            "--cap-drop", "ALL", "--", sys.executable, "-c", "print('ok')"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{bwrap}: {e}"
    if p.returncode != 0 or p.stdout.strip() != "ok":
        return f"{bwrap} exited with {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
    return None


def _bwrap_version(bwrap: str) -> str:
    try:
        return subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "bwrap"


def gpu_device_nodes() -> List[str]:
    """The NVIDIA device nodes of this machine (/dev/nvidia*, /dev/nvidia-caps/*, /dev/dri not)."""
    nodes = sorted(str(p) for p in Path("/dev").glob("nvidia*") if not p.is_dir())
    nodes += sorted(str(p) for p in Path("/dev/nvidia-caps").glob("*")) if Path("/dev/nvidia-caps").is_dir() else []
    return nodes


#: Paths hidden from every sandbox when they exist: root's home, container and cloud secrets,
#: The folder that holds the kernelsynth package (a checkout for an editable install, else
#: site-packages): workers import it from there, so it is readable in the sandbox wherever it is.
PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
#: host keys, the persistent temporary folder (the sandbox's /tmp is its own already), and the
#: runtime folders, whose unix sockets (the session bus, docker.sock, agents) a network namespace
#: does not isolate (tests/adversarial/sandbox_s7 unix_socket: a candidate talked to a listener at
#: /run/kernelsynth-s7.sock). GPU sandboxes get the NVIDIA daemons' folders back (:data:`GPU_RUN_PATHS`).
SECRET_PATHS = ("/root", "/run", "/var/run", "/run/secrets", "/var/run/secrets", "/etc/ssh", "/var/tmp")
#: Under /run, what a GPU worker keeps (read-only): the persistence and fabric manager daemons.
GPU_RUN_PATHS = ("/run/nvidia-persistenced", "/run/nvidia-fabricmanager")


@dataclass
class Sandbox:
    """How workers are launched (module docstring). ``hidden``: folders replaced by an empty tmpfs
    (the run directory, the home); ``readable``: paths under them the worker needs (the spec,
    copies of external candidates, Python itself), bound back read-only; ``cache``: the shared
    compile cache (kernelsynth/cache.py), bound read-only wherever it is (its files are not
    checked for readability: an unreadable entry is a cache miss); ``private``: folders the
    worker may write (the torch extensions folder), each an empty private tmpfs in the sandbox.

    ``active`` is True when workers run inside bubblewrap; ``status`` is the one line the run
    logs and writes to run.json. Raises UserError (mode ``on``) when bwrap is missing or fails.
    """

    settings: SandboxSettings = field(default_factory=SandboxSettings)
    hidden: List[str] = field(default_factory=list)
    readable: List[str] = field(default_factory=list)
    private: List[str] = field(default_factory=list)
    gpu: bool = False
    cache: Optional[str] = None

    def __post_init__(self):
        self.settings = SandboxSettings.of(self.settings)
        self.bwrap, self.problem = None, None
        if self.settings.mode == "off":
            self.problem = "exploration.sandbox.mode=off"
        else:
            self.bwrap = find_bwrap(self.settings.bwrap)
            self.problem = bwrap_problem(self.bwrap) if self.bwrap else (
                "bubblewrap not found (set exploration.sandbox.bwrap or $KERNELSYNTH_BWRAP, or install the "
                "'bubblewrap' package)")
            if self.problem and self.settings.mode == "on":
                from .errors import UserError

                raise UserError(f"exploration.sandbox.mode=on but the sandbox cannot start: {self.problem}")
        self.active = self.problem is None
        self.private_files = _private_files(self.readable, skip=[*self.hidden, *self.private])
        self.private_device = self._device_only_for_root()
        self.drop_uid = os.geteuid() == 0 and self.private_device is None and not self.private_files
        self.version = _bwrap_version(self.bwrap) if self.active else None

    def _device_only_for_root(self) -> Optional[str]:
        """The first GPU device node CUDA opens that another uid cannot use (neither o+rw, nor g+rw:
        the worker keeps that group), or None when every one is usable. The MIG capability nodes under /dev/nvidia-caps are bound
        but not required: root-only ones (mode 0400, seen on the H200) only matter on a MIG
        partition, which workers do not configure; requiring them kept every worker at uid 0."""
        if not self.gpu:
            return None
        for n in gpu_device_nodes():
            if n.startswith("/dev/nvidia-caps/"):
                continue
            m = os.stat(n).st_mode
            if not (m & 0o006 == 0o006 or m & 0o060 == 0o060):
                return n
        return None

    @property
    def status(self) -> str:
        if self.active:
            uid = "a uid of its own per worker" if self.drop_uid else (
                "uid 0 without capabilities: RLIMIT_NPROC is not enforced for root" + (
                    f"; kept because {self.private_files[0]} is not readable by other users" if self.private_files else
                    f"; kept because the device node {self.private_device} is usable by root only"
                    if self.private_device and os.geteuid() == 0 else ""))
            cache = ", compile cache read-only" if self.cache else ""
            return (f"sandbox: {self.version} (no network, PID namespace, read-only filesystem, run directory and "
                    f"home hidden, private /tmp{cache}, {uid})")
        return (f"sandbox: NONE ({self.problem}): candidates run with this user's files and network "
                "(environment scrubbed, resource limits set); see SECURITY.md")

    def to_dict(self) -> Dict[str, Any]:
        return {"active": self.active, "status": self.status, "bwrap": self.bwrap, "version": self.version,
                "drop_uid": self.drop_uid if self.active else False, "settings": asdict(self.settings)}

    def limits(self) -> Dict[str, Any]:
        """What :func:`enter_worker` applies in the worker (JSON-serialisable)."""
        s = self.settings
        uid = None
        if self.active and self.drop_uid:
            uid = 200_000 + secrets.randbelow(1_000_000)  # one per worker: NPROC counts per uid
        groups = sorted({os.stat(n).st_gid for n in gpu_device_nodes()}) if self.gpu and uid is not None else []
        return {"nproc": s.nproc, "nofile": s.nofile, "fsize": s.fsize_mb << 20, "cpu_s": s.cpu_s,
                "cpu_s_worker": s.cpu_s_worker, "uid": uid, "groups": groups, "sandboxed": self.active}

    def command(self, argv: List[str], limits: Dict[str, Any], tag: Optional[str] = None) -> List[str]:
        """``argv`` wrapped in bwrap (or unchanged when the sandbox is not active). ``tag``: a word
        put in bwrap's own command line (``--setenv KERNELSYNTH_WORKER_TAG tag``), by which
        :func:`kill_tagged` finds the inner bwrap (a fork of the outer one, same command line)."""
        if not self.active:
            return list(argv)
        s = self.settings
        cmd = [self.bwrap, *(["--setenv", "KERNELSYNTH_WORKER_TAG", tag] if tag else []),
               "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--perms", "1777", "--size", str(s.tmp_mb << 20), "--tmpfs", "/tmp",
               "--perms", "1777", "--size", str(s.tmp_mb << 20), "--tmpfs", "/dev/shm"]  # both bounded
        for n in gpu_device_nodes() if self.gpu else []:
            cmd += ["--dev-bind", n, n]
        home = os.path.expanduser("~")
        secret_files, secret_dirs = credential_paths(os.environ)
        keep = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.realpath(sys.executable), *sys.path,
                *self.readable, *([self.cache] if self.cache else [])]
        # a credential folder that holds what the worker must read (Python, the spec) cannot be hidden
        secret_dirs = [d for d in secret_dirs if not any(_under(os.path.realpath(k), d) for k in keep if k)]
        every = [p for p in dict.fromkeys(os.path.realpath(x) for x in [*self.hidden, home, *SECRET_PATHS,
                                                                        *secret_dirs] if x)
                 if p != "/" and os.path.isdir(p)]
        # A hidden folder inside another one or inside /tmp (already a fresh tmpfs), such as a run
        # directory under the home, is covered by the outer mount; it is hidden again after the
        # binds below, which may bring it back (a repo under the home, with its outputs/ inside,
        # on sys.path).
        nested = [p for p in every if any(_under(p, h) and p != h for h in [*every, "/tmp"])]
        hide = [p for p in every if p not in nested]
        for p in hide:
            cmd += ["--tmpfs", p]
        # read back what the worker needs under a hidden folder: Python, its packages, the spec
        # (kernelsynth's own folder too: an editable install imports it through a finder, not sys.path)
        need = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
                *[p for p in sys.path if p], PACKAGE_ROOT, *self.readable, *(GPU_RUN_PATHS if self.gpu else ())]
        made, bound = set(), []

        def lead_to(p: str) -> None:
            """Make the folders between the hidden folder over ``p`` and ``p`` traversable by the
            worker's uid (bwrap creates them 0700)."""
            top = max((h for h in [*hide, "/tmp"] if _under(p, h)), key=len)
            for d in reversed([str(a) for a in Path(p).parents if _under(str(a), top) and str(a) != top]):
                if d not in made:
                    made.add(d)
                    cmd.extend(["--perms", "0755", "--dir", d])

        for p in sorted(dict.fromkeys(os.path.realpath(x) for x in need), key=len):
            hidden = any(_under(p, h) for h in [*hide, "/tmp"])
            if p in every or p == "/tmp":  # a script run from /tmp or from the home puts it on sys.path:
                continue                  # binding it would undo the hiding (and make /tmp read-only)
            if os.path.exists(p) and hidden and not any(_under(p, b) for b in bound):
                bound.append(p)
                lead_to(p)
                cmd += ["--ro-bind", p, p]
        if self.cache and os.path.isdir(self.cache):  # read-only wherever it is: only the parent writes it
            p = os.path.realpath(self.cache)
            if any(_under(p, h) for h in [*hide, "/tmp"]):
                lead_to(p)
            cmd += ["--ro-bind", p, p]
        for p in map(os.path.realpath, self.private):
            if any(_under(p, h) for h in [*hide, "/tmp"]):
                lead_to(p)
            cmd += ["--perms", "1777", "--size", str(s.tmp_mb << 20), "--tmpfs", p]
        for f in secret_files:  # a token file outside the hidden folders reads as empty
            if not any(_under(f, h) for h in [*hide, "/tmp"]) or any(_under(f, b) for b in bound):
                cmd += ["--ro-bind", "/dev/null", f]
        rehide = [p for p in nested if any(_under(p, b) for b in bound)]
        # one inside another (a sweep job's run directory inside its hidden sweep folder) is covered
        # by the outer one's tmpfs, where it no longer exists to be remounted
        rehide = [p for p in rehide if not any(_under(p, q) and p != q for q in rehide)]
        for p in rehide:
            cmd += ["--tmpfs", p]
        # what the worker must read inside a hidden run directory (the generated candidates' folder,
        # <run>/inductor) comes back after that tmpfs: with the run directory inside a checkout on
        # sys.path (the default outputs/ of a clone under /tmp or the home) the rehide covered it, and
        # every inductor candidate failed with FileNotFoundError (session 17's new-user review)
        made_in: set = set()
        for p in sorted(dict.fromkeys(os.path.realpath(x) for x in self.readable), key=len):
            under = [q for q in rehide if _under(p, q) and p != q]
            if not under or not os.path.exists(p):
                continue
            root = max(under, key=len)
            for d in reversed([str(a) for a in Path(p).parents if _under(str(a), root) and str(a) != root]):
                if d not in made_in:
                    made_in.add(d)
                    cmd += ["--perms", "0755", "--dir", d]
            cmd += ["--ro-bind", p, p]
        for p in hide + rehide:
            cmd += ["--remount-ro", p]  # hidden and not writable either (a write there is denied, EROFS)
        # bwrap's /dev is a tmpfs without a size, owned by the worker's uid when the run is not root
        # (or the worker keeps uid 0): writable, it was scratch outside tmp_mb (sandbox_s8 dev_fill).
        # Read-only, its device nodes still work; /dev/shm is a mount of its own and stays writable.
        cmd += ["--remount-ro", "/dev"]
        cmd += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--chdir", "/tmp", "--cap-drop", "ALL"]
        if limits.get("uid") is not None:
            cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # used once, then gone (enter_worker)
        return cmd + ["--"] + list(argv)


#: Variables naming credential files or folders besides those whose name has a word of
#: :data:`ENV_DENY` (HF_TOKEN_PATH, GOOGLE_APPLICATION_CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE, ...).
CREDENTIAL_PATH_VARS = ("NETRC", "KUBECONFIG", "DOCKER_CONFIG", "AWS_CONFIG_FILE")
#: Hugging Face's token files in its home (huggingface_hub.constants: HF_TOKEN_PATH, HF_STORED_TOKENS_PATH).
HF_TOKEN_FILES = ("token", "stored_tokens")


def credential_paths(environ: Dict[str, str]) -> tuple:
    """``(files, folders)`` that ``environ`` (the parent's) names as holding credentials and that
    exist: the value (a path, or a list of paths) of every variable whose name has a word of
    :data:`ENV_DENY` or is in :data:`CREDENTIAL_PATH_VARS`, and Hugging Face's token files
    (:data:`HF_TOKEN_FILES`) under ``$HF_HOME`` (default ``$XDG_CACHE_HOME/huggingface``). The
    sandbox hides them wherever they are: outside the home a worker could read them, since a
    worker of a non-root run has the user's uid (tests/adversarial/sandbox_s8 hf_home_token).
    Absolute, real paths; ``/`` never."""
    values = [v for k, v in environ.items()
              if k in CREDENTIAL_PATH_VARS or any(d in k.upper() for d in ENV_DENY)]
    hf = environ.get("HF_HOME") or os.path.join(environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                                "huggingface")
    paths = [p for v in values for p in v.split(os.pathsep)] + [os.path.join(hf, n) for n in HF_TOKEN_FILES]
    files, dirs = [], []
    for p in dict.fromkeys(os.path.realpath(p) for p in paths if os.path.isabs(p)):
        if p == "/":
            continue
        if os.path.isfile(p):
            files.append(p)
        elif os.path.isdir(p):
            dirs.append(p)
    return files, dirs


def _private_files(paths: Iterable[str], skip: Iterable[str] = (), limit: int = 500) -> List[str]:
    """Files and folders of ``paths`` (walked, at most ``limit`` entries, not under ``skip``)
    that a different uid could not read: a worker under its own uid could not import them."""
    out, seen, skip = [], 0, [os.path.realpath(x) for x in skip]
    for top in paths:
        below = [x for x in skip if not _under(os.path.realpath(top), x)]  # hidden folders inside ``top``
        for root, dirs, files in os.walk(top):
            if any(_under(os.path.realpath(root), x) for x in below):
                dirs[:] = []
                continue
            for name in [None, *files]:
                path = root if name is None else os.path.join(root, name)
                try:
                    mode = os.stat(path).st_mode
                except OSError:
                    continue
                need = 0o005 if name is None else 0o004
                if mode & need != need:
                    out.append(path)
                seen += 1
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if seen > limit:
                break
    return out


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# ---------------------------------------------------------------------------------- in the worker
def enter_worker(limits: Dict[str, Any]) -> None:
    """Apply ``limits`` (from :meth:`Sandbox.limits`) to this worker process, before any job:
    join a new, empty session keyring (:func:`join_new_session_keyring`), drop to the worker's own uid (capabilities go with it; USER and LOGNAME name it, since it has
    no passwd entry), create HOME, and set RLIMIT_NPROC,
    RLIMIT_NOFILE, RLIMIT_FSIZE and RLIMIT_CPU (soft per job, see :func:`start_job`)."""
    join_new_session_keyring()
    if limits.get("uid") is not None:
        uid = int(limits["uid"])
        os.setgroups([int(g) for g in limits.get("groups") or []])
        os.setgid(uid)
        os.setuid(uid)
        # no passwd entry for this uid: getpass.getuser() (torch._inductor's default cache folder,
        # imported with torch._dynamo) reads these first and would raise KeyError otherwise (H200)
        os.environ["USER"] = os.environ["LOGNAME"] = f"kernelsynth-worker-{uid}"
    for d in (os.environ.get("HOME"), os.environ.get("TMPDIR")):
        if d:
            os.makedirs(d, exist_ok=True)
    _set(resource.RLIMIT_NOFILE, int(limits["nofile"]))
    _set(resource.RLIMIT_FSIZE, int(limits["fsize"]))
    if limits.get("sandboxed") and (limits.get("uid") is not None or os.geteuid() != 0):
        # counted per uid (root is exempt): the worker's own uid, or the user namespace bwrap made
        # for a non-root run; unsandboxed it would count all of this user's processes
        _set(resource.RLIMIT_NPROC, int(limits["nproc"]))
    _set(resource.RLIMIT_CPU, int(limits["cpu_s_worker"]))
    start_job(limits)


#: keyctl(2)'s system call number per machine (asm/unistd_64.h; asm-generic for arm64) and its
#: KEYCTL_JOIN_SESSION_KEYRING operation (linux/keyctl.h).
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "ppc64le": 271}
_KEYCTL_JOIN_SESSION_KEYRING = 1


def join_new_session_keyring() -> bool:
    """Replace this process's session keyring with a new anonymous one (keyctl(2),
    KEYCTL_JOIN_SESSION_KEYRING with a NULL name). The kernel keyring is not namespaced: without
    this a worker inherits the parent's session keyring and may read its keys (Kerberos KEYRING
    caches, keyctl-stored tokens) whatever its uid (found by tests/adversarial/sandbox_s6
    keyring_read). Returns False where the call is not available (another machine, a seccomp
    filter), which leaves the inherited keyring."""
    import ctypes
    import platform

    nr = _SYS_KEYCTL.get(platform.machine())
    if nr is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(ctypes.c_long(nr), ctypes.c_long(_KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_void_p(None)) >= 0


def _set(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def start_job(limits: Dict[str, Any]) -> None:
    """Give the next job ``cpu_s`` CPU seconds (soft RLIMIT_CPU = used + cpu_s; SIGXCPU past it)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    want = int(r.ru_utime + r.ru_stime) + int(limits["cpu_s"])
    if hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (want, hard))


def leftover_processes(sandboxed: bool) -> List[str]:
    """Processes other than this worker still alive after a job: in the sandbox, every process
    of the PID namespace but bwrap's init (pid 1) and this one; unsandboxed, this process's
    descendants (a process that detached itself escapes this count). Each as ``"pid name"``."""
    me = os.getpid()
    table = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    head, tail = f.read().rsplit(")", 1)
                state, ppid = tail.split()[:2]
                if state != "Z" or _live_threads(d):  # a leader that exited with its threads running
                    table[int(d)] = (int(ppid), head.split("(", 1)[1])
            except (OSError, ValueError, IndexError):
                continue
    if sandboxed:
        return [f"{p} {n}" for p, (_, n) in sorted(table.items()) if p not in (1, me)]
    out, frontier = [], {me}
    while frontier:
        kids = {p for p, (pp, _) in table.items() if pp in frontier}
        out += [f"{p} {table[p][1]}" for p in sorted(kids)]
        frontier = kids
    return out


def _live_threads(pid: str) -> bool:
    """Whether any thread of ``pid`` is not a zombie: a process whose main thread ended with the
    raw exit system call shows ``Z`` while its other threads run (tests/adversarial/sandbox_s6
    hidden_leader)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    return True
        except (OSError, IndexError):
            continue
    return False


def kill_namespace_leftovers() -> None:
    """In the sandbox, after a job: SIGKILL every process of the worker's PID namespace but bwrap's
    init (pid 1) and this worker, and reap its children, so that nothing a job started runs during
    the next one (whatever :func:`leftover_processes` could see). Only for sandboxed workers:
    outside a PID namespace /proc lists the whole machine."""
    import signal

    kill, me = _INSTALLED.get("kill", os.kill), os.getpid()
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) not in (1, me):
            try:
                kill(int(d), signal.SIGKILL)
            except OSError:
                pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break


def kill_tagged(tag: str) -> List[int]:
    """SIGKILL every process whose command line has ``KERNELSYNTH_WORKER_TAG`` ``tag``: a worker's
    bwrap processes. The outer bwrap (the parent's child) hands the job to an inner one, pid 1 of
    the new PID namespace, which arms ``--die-with-parent`` only once it runs: killed in its first
    ~20 ms the outer one left the inner alive for good, parented to init and holding the parent's
    descriptors (tests/adversarial/sandbox_s7 startup_kill). Killing the inner one ends its whole
    PID namespace. Returns the pids signalled."""
    import signal

    needle = b"KERNELSYNTH_WORKER_TAG\x00" + tag.encode() + b"\x00"
    hit = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if needle not in f.read():
                    continue
            os.kill(int(d), signal.SIGKILL)
            hit.append(int(d))
        except OSError:
            continue
    return hit


def kill_descendants() -> None:
    """SIGKILL this process's descendants (unsandboxed workers, before they exit)."""
    import signal

    for entry in leftover_processes(sandboxed=False):
        try:
            _INSTALLED.get("kill", os.kill)(int(entry.split()[0]), signal.SIGKILL)
        except OSError:
            pass
