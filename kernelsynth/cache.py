"""The shared compile cache (SECURITY.md, "Compile caches"): NVRTC cubins and Triton's
compile outputs reused across workers and runs, written only by the parent.

Layout of the cache root (``cache_dir``, ``$KERNELSYNTH_CACHE``)::

    cuda/<key>.cubin, cuda/<key>.json    NVRTC cubin and its sidecar (the inputs of <key>)
    triton/<hash>/...                    one Triton cache folder (Triton's own layout)
    torch_extensions/, ceilings.json     not handled here (torch extensions stay per worker)

Sandboxed workers see the root read-only (kernelsynth.sandbox.Sandbox ``cache``). Lookups read
the root first, then the worker's own staging folder (``$KERNELSYNTH_CACHE_STAGING``, inside its
private, size-limited ``/tmp``); new compile outputs go to staging. After each job the worker
packs what it staged (:func:`collect_staged`: regular files only, their bytes, sizes bounded)
into the job's result and empties its staging. The parent (:class:`CompileCache`) validates
every packed entry and promotes the valid ones by writing them itself into a temporary name in
the root and renaming it into place (atomic); it refuses, and records with its reason, any entry
whose path does not fit the layout, a file over :data:`MAX_FILE_BYTES`, a cubin whose sidecar
does not hash to its name, a Triton folder whose metadata does not parse or whose name is not
its hash. Entries of a worker that ran an external candidate or generated (inductor) code, or whose job was denied by the
sandbox, tampered or failed the independent check, are never promoted (recorded, discarded).

Without the sandbox there is no staging: workers write the root directly, as before.

Sharing: the root may be shared by concurrent runs, sweep jobs and hosts (a shared filesystem).
Every file goes in through :func:`write_atomic` (an exclusive temporary name, fsync, rename) and
every Triton folder through a rename of a complete temporary folder, so a reader never sees half
an entry and two writers of one entry leave one whole copy (entries are keyed by the hash of their
inputs, so both copies are the same). tests/test_shared_cache.py promotes and reads in several
processes at once.

Counters (:data:`COUNTS`): lookups that found an entry in the root (``shared_hits``), in the
worker's staging (``staged_hits``), or nowhere (``misses``: a compile). They travel with each
job's result; the parent adds them up per run (run.json ``compile_cache``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

#: The environment variable naming a sandboxed worker's staging folder (unset: no staging).
STAGING_ENV = "KERNELSYNTH_CACHE_STAGING"
#: Where a sandboxed worker stages (its private /tmp, so bounded by exploration.sandbox.tmp_mb).
WORKER_STAGING = "/tmp/staging"
#: The Triton cache manager workers use (TRITON_CACHE_MANAGER).
TRITON_MANAGER = "kernelsynth.triton_cache:StagedCacheManager"
#: Largest file promoted; largest total a job may stage (more: the job's entries are refused).
MAX_FILE_BYTES = 64 << 20
MAX_JOB_BYTES = 512 << 20

CUBIN_NAME = re.compile(r"^[0-9a-f]{64}\.(cubin|json)$")
TRITON_FOLDER = re.compile(r"^[A-Z2-7]{52}$")  # base32 of a sha256, unpadded (triton.runtime.cache._base32)
TRITON_FILE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,199}$")
SIDECAR_KEYS = ("source_sha256", "name", "arch", "options", "nvrtc")

#: This process's lookups (a worker's; reset by :func:`collect_staged` after each job).
COUNTS = {"shared_hits": 0, "staged_hits": 0, "misses": 0}


# ------------------------------------------------------------------------------ both sides
def cubin_key(sidecar: Dict[str, Any]) -> str:
    """The cache key of a cubin: SHA-256 of its sidecar's fields (the SHA-256 of the source, the
    kernel name, the arch, the NVRTC options -- macros and include folders among them -- and the
    NVRTC version). The parent recomputes it from the sidecar to check a staged cubin's name."""
    parts = [str(sidecar["source_sha256"]), str(sidecar["name"]), str(sidecar["arch"]),
             *[str(o) for o in sidecar["options"]], str(sidecar["nvrtc"])]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def triton_folder_name(hash_hex: str) -> str:
    """The folder Triton keeps a compile in: base32 of its hash (``metadata["hash"]``), unpadded."""
    return base64.b32encode(bytes.fromhex(hash_hex)).decode().rstrip("=")


def roots(sub: str) -> Tuple[Optional[Path], Optional[Path]]:
    """``(shared, staging)`` folders of the cache part ``sub`` ("cuda", "triton") for this
    process: the root from $KERNELSYNTH_CACHE (None when unset), staging from
    :data:`STAGING_ENV` (None: unsandboxed, write the root directly)."""
    root, staging = os.environ.get("KERNELSYNTH_CACHE"), os.environ.get(STAGING_ENV)
    return (Path(root) / sub if root else None), (Path(staging) / sub if staging else None)


def lookup(candidates: List[Optional[Path]], shared: Optional[Path]) -> Optional[Path]:
    """The first of ``candidates`` that is a readable file (counted in :data:`COUNTS`: a hit in
    the shared root when it is under ``shared``, else a staged hit); None, counted as a miss."""
    for p in candidates:
        if p is not None and p.is_file() and os.access(p, os.R_OK):
            inside = shared is not None and str(p).startswith(str(shared).rstrip("/") + "/")
            COUNTS["shared_hits" if inside else "staged_hits"] += 1
            return p
    COUNTS["misses"] += 1
    return None


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder (created exclusively:
    ``mkstemp``, unique across processes and hosts sharing the folder), flushed to disk, then
    renamed into place: a reader in any process sees the old file or the whole new one, and a
    crash of the writer's host never leaves a short file under the final name (without the fsync
    the rename can reach the disk before the data)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ------------------------------------------------------------------------------ in the worker
def collect_staged(staging: Optional[str] = None) -> Dict[str, Any]:
    """What this worker staged since the last call, for the parent, then staging emptied:
    ``{"files": {relative path: bytes}, "refused": [(relative path, reason)], "counts": COUNTS}``.
    Only regular files are read (``lstat``: a symlink is not followed, it is refused as one);
    files over :data:`MAX_FILE_BYTES` are refused. Runs in the worker, so the parent trusts none
    of it: it validates every file again (:meth:`CompileCache.receive`)."""
    out: Dict[str, Any] = {"files": {}, "refused": [], "counts": dict(COUNTS)}
    for k in COUNTS:
        COUNTS[k] = 0
    top = staging or os.environ.get(STAGING_ENV)
    if not top or not os.path.isdir(top):
        return out
    total = 0
    for root, dirs, files in os.walk(top, topdown=False):
        for name in files + dirs:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, top)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                try:
                    os.rmdir(path)
                except OSError:
                    pass
                continue
            if stat.S_ISLNK(st.st_mode):
                out["refused"].append((rel, f"a symlink (to {os.readlink(path)[:200]})"))
            elif not stat.S_ISREG(st.st_mode):
                out["refused"].append((rel, "not a regular file"))
            elif st.st_size > MAX_FILE_BYTES or total + st.st_size > MAX_JOB_BYTES:
                out["refused"].append((rel, f"{st.st_size} bytes: over the limit ({MAX_FILE_BYTES} per file, "
                                            f"{MAX_JOB_BYTES} per job)"))
            else:
                try:
                    with open(path, "rb") as f:
                        out["files"][rel] = f.read(MAX_FILE_BYTES + 1)
                    total += st.st_size
                except OSError as e:
                    out["refused"].append((rel, f"unreadable: {e}"))
            try:
                os.unlink(path)
            except OSError:
                pass
    return out


# ------------------------------------------------------------------------------ in the parent
class CompileCache:
    """The shared compile cache of one run, as the parent keeps it (module docstring).

    ``root``: the cache folder. ``sandboxed``: workers stage and the parent promotes (else the
    workers write the root themselves and only the counters are kept). :meth:`worker_env` is
    what workers need; :meth:`receive` takes one job's staged entries; :meth:`report` is
    run.json's ``compile_cache``.
    """

    def __init__(self, root: Path, sandboxed: bool):
        self.root, self.sandboxed = Path(root), bool(sandboxed)
        for d in (self.root, self.root / "cuda", self.root / "triton"):
            d.mkdir(parents=True, exist_ok=True)
            if self.sandboxed:
                try:
                    os.chmod(d, 0o755)  # workers of other uids look entries up here
                except OSError:
                    pass
        self.counts = {"promoted": 0, "refused": 0, "discarded": 0, "duplicates": 0,
                       "shared_hits": 0, "staged_hits": 0, "misses": 0}
        self.events: List[Dict[str, Any]] = []

    def worker_env(self) -> Dict[str, str]:
        """The cache settings of every worker: the root, Triton's cache manager and folder, and
        (sandboxed) the staging folder."""
        env = {"KERNELSYNTH_CACHE": str(self.root), "TRITON_CACHE_MANAGER": TRITON_MANAGER}
        if self.sandboxed:
            env |= {STAGING_ENV: WORKER_STAGING, "TRITON_CACHE_DIR": f"{WORKER_STAGING}/triton"}
        else:
            env["TRITON_CACHE_DIR"] = str(self.root / "triton")
        return env

    def report(self) -> Dict[str, Any]:
        return {"root": str(self.root), "staged": self.sandboxed, **self.counts, "events": self.events}

    def _event(self, job: str, entry: str, problem: str, **extra: Any) -> None:
        self.events.append({"job": job, "entry": entry, "problem": problem, **extra})

    def receive(self, staged: Any, job: str, taint: Optional[str] = None) -> None:
        """Take the staged entries of one job (:func:`collect_staged`'s dict, from the worker
        that ran ``job``): add its counters, then promote each valid entry -- unless ``taint``
        (why the worker is not trusted to fill the cache), in which case all are discarded and
        that is recorded. Never raises on what the worker sent."""
        if not isinstance(staged, dict):
            return
        counts = staged.get("counts") if isinstance(staged.get("counts"), dict) else {}
        for k, v in counts.items():
            if k in ("shared_hits", "staged_hits", "misses") and isinstance(v, int) and 0 <= v < 1 << 40:
                self.counts[k] += v
        files = staged.get("files") if isinstance(staged.get("files"), dict) else {}
        refused = staged.get("refused") if isinstance(staged.get("refused"), list) else []
        for item in refused[:100]:  # what the worker itself would not send (a symlink, a device)
            if isinstance(item, (list, tuple)) and len(item) == 2:
                self.counts["refused"] += 1
                # text only: str() of a nested list recurses (a deep one raised RecursionError in the
                # parent, a shared one is exponential: tests/adversarial/sandbox_s8 refused_deep)
                entry, why = (x[:300] if isinstance(x, str) else f"(a {type(x).__name__}, not text)" for x in item)
                self._event(job, entry, f"refused in the worker: {why}")
        if not files:
            return
        if not self.sandboxed:  # no staging without the sandbox: nothing should come
            self.counts["refused"] += len(files)
            self._event(job, f"{len(files)} file(s)", "staged entries from an unsandboxed worker: not expected, refused")
            return
        if taint:
            self.counts["discarded"] += len(files)
            self._event(job, f"{len(files)} file(s)", f"not promoted: the worker {taint}",
                        entries=sorted(str(k)[:200] for k in files)[:20])
            return
        cuda: Dict[str, Dict[str, bytes]] = {}
        triton: Dict[str, Dict[str, bytes]] = {}
        for rel, data in files.items():
            problem = None
            parts = str(rel).split("/") if isinstance(rel, str) else []
            if not isinstance(data, bytes):
                problem = "not bytes"
            elif len(data) > MAX_FILE_BYTES:
                problem = f"{len(data)} bytes: over the limit of {MAX_FILE_BYTES}"
            elif len(parts) == 2 and parts[0] == "cuda" and CUBIN_NAME.match(parts[1]):
                stem, ext = parts[1].split(".")
                cuda.setdefault(stem, {})[ext] = data
            elif len(parts) == 3 and parts[0] == "triton" and TRITON_FOLDER.match(parts[1]) \
                    and TRITON_FILE.match(parts[2]):
                triton.setdefault(parts[1], {})[parts[2]] = data
            else:
                problem = "a name that does not match the cache's layout (cuda/<sha256>.cubin|json, triton/<hash>/<file>)"
            if problem:
                self.counts["refused"] += 1
                self._event(job, str(rel)[:300], problem)
        for key, pair in sorted(cuda.items()):
            self._promote_cubin(job, key, pair)
        for folder, entry in sorted(triton.items()):
            self._promote_triton(job, folder, entry)

    def _refuse(self, job: str, entry: str, problem: str, n: int = 1) -> None:
        self.counts["refused"] += n
        self._event(job, entry, problem)

    def _promote_cubin(self, job: str, key: str, pair: Dict[str, bytes]) -> None:
        entry = f"cuda/{key}.cubin"
        if set(pair) != {"cubin", "json"}:
            return self._refuse(job, f"cuda/{key}.{next(iter(pair))}", "a cubin without its sidecar, or a sidecar "
                                "without its cubin")
        try:
            side = json.loads(pair["json"].decode())
            ok = isinstance(side, dict) and set(side) == set(SIDECAR_KEYS) and isinstance(side["options"], list) \
                and re.fullmatch(r"[0-9a-f]{64}", str(side["source_sha256"])) is not None
            again = cubin_key(side) if ok else None
        except (ValueError, UnicodeDecodeError, KeyError, TypeError):
            ok, again = False, None
        if not ok:
            return self._refuse(job, entry, f"its sidecar is not a JSON object with {', '.join(SIDECAR_KEYS)}", 2)
        if again != key:
            return self._refuse(job, entry, f"its sidecar hashes to {again[:16]}..., not to its name", 2)
        dest = self.root / "cuda" / f"{key}.cubin"
        if dest.exists():
            self.counts["duplicates"] += 1
            return
        write_atomic(dest.with_suffix(".json"), pair["json"])
        write_atomic(dest, pair["cubin"])  # last: a lookup keys on the cubin
        self.counts["promoted"] += 1

    def _promote_triton(self, job: str, folder: str, files: Dict[str, bytes]) -> None:
        entry = f"triton/{folder}"
        dest = self.root / "triton" / folder
        groups = [n for n in files if n.startswith("__grp__")]
        rewritten: Dict[str, bytes] = {}
        listed: set = set()
        try:
            if groups:
                for g in groups:
                    meta_name = g[len("__grp__"):]
                    children = json.loads(files[g].decode()).get("child_paths")
                    if not isinstance(children, dict) or meta_name not in children:
                        raise ValueError(f"{g} does not list its metadata file {meta_name}")
                    names = {str(k): os.path.basename(str(v)) for k, v in children.items()}
                    missing = sorted(set(names.values()) - set(files))
                    if missing:
                        raise ValueError(f"{g} names files the entry does not have: {', '.join(missing[:5])}")
                    meta = json.loads(files[names[meta_name]].decode())
                    if not isinstance(meta, dict) or not re.fullmatch(r"[0-9a-f]{64}", str(meta.get("hash", ""))):
                        raise ValueError(f"its metadata {meta_name} has no 64-hex 'hash'")
                    if triton_folder_name(meta["hash"]) != folder:
                        raise ValueError(f"its metadata's hash {meta['hash'][:16]}... is not its folder name")
                    rewritten[g] = json.dumps({"child_paths": {k: str(dest / v) for k, v in names.items()}}).encode()
                    listed.update(names.values())
                stray = sorted(set(files) - listed - set(groups))
                if stray:
                    raise ValueError(f"files no group file lists: {', '.join(stray[:5])}")
            else:
                for n, data in files.items():
                    if n.endswith(".autotune.json"):
                        json.loads(data.decode())
                    elif not n.endswith(".so"):
                        raise ValueError(f"{n}: a compile folder without its group file (__grp__*.json), or a file "
                                         "that is neither a launcher module (.so) nor autotuning results")
        except (ValueError, UnicodeDecodeError, AttributeError, TypeError) as e:
            return self._refuse(job, entry, f"its metadata does not parse or check: {str(e)[:300]}", len(files))
        if dest.exists():
            self.counts["duplicates"] += 1
            return
        # an exclusive temporary folder (mkdtemp: unique across processes and hosts), renamed whole
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder}.", suffix=".tmp", dir=self.root / "triton"))
        for n, data in files.items():
            write_atomic(tmp / n, rewritten.get(n, data))
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, dest)  # atomic; fails when another worker's copy got there first
            self.counts["promoted"] += 1
        except OSError:
            for n in files:
                (tmp / n).unlink(missing_ok=True)
            tmp.rmdir()
            self.counts["duplicates"] += 1
