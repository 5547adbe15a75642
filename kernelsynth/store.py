"""The observation store: one row per measured attempt, appended to disk as it completes.

Layout: ``<run dir>/observations/<key>.parquet``, one small Parquet file per observation, each
written atomically (temporary file + rename), so a crash never leaves a half-written row and a
re-run with the same run directory skips every key already on disk. ``read()`` returns all rows
as one table with :data:`OBSERVATION_SCHEMA`, the single declaration of the columns.

Authentication (SECURITY.md): every observation file carries an HMAC-SHA256 tag in
its Parquet metadata (``kernelsynth.hmac``) over its file name and rows, with a per-run key made
by the parent (``secrets``) and kept in ``<run dir>/.observation-key`` (mode 0600), where no
sandboxed worker can see it (the run directory is hidden from them). :meth:`ObservationStore.verify`
(at resume) and :meth:`ObservationStore.read` with ``verify=True`` (at consolidation and merge)
set aside (``observations/untrusted/``) and record every file whose tag, name or schema does not
check, so that its job is re-run and the event lands in run.json; such a file is never read as an
observation. Without the sandbox a candidate runs as the user and can read the key: the tags then
prove nothing against it (the run says it is unsandboxed).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

import pyarrow as pa
import pyarrow.parquet as pq

#: Columns of an observation (units in the names: ms, s, bytes, GB/s, TFLOP/s, %).
OBSERVATION_SCHEMA = pa.schema([
    ("key", pa.string()),                 # content hash: what was measured, where, with what
    ("task", pa.string()),
    ("spec_sha256", pa.string()),
    ("role", pa.string()),                # "candidate" (spec ladder), "baseline" or "external"
    ("version", pa.string()),             # v0, v1, ... ("eager"/"compile" for baselines)
    ("name", pa.string()),
    ("backend", pa.string()),
    ("config", pa.string()),              # JSON of the tunables (BLOCK_M, BLOCK_N, num_warps, ...)
    ("dtype", pa.string()),
    ("verdict", pa.string()),             # "accepted" (verified) or "rejected"
    ("fault", pa.string()),               # a kernelsynth.contract.Fault value: ok, wrong_output,
                                          # compile_error, exception, cuda_error, oom, timeout, crashed,
                                          # exit_called, tampering, timing_integrity, audit, screened,
                                          # sandbox
    ("reason", pa.string()),
    ("trials", pa.int64()),
    ("verify_shapes", pa.string()),       # JSON list of shapes
    ("timing_shape", pa.string()),        # JSON shape, or null when not timed
    ("max_abs_err", pa.float64()),
    ("max_rel_err", pa.float64()),
    ("precision_policy", pa.string()),    # allclose: the declared policy (fp32, tf32, bf16, ...; rule 23)
    ("precision_rms", pa.float64()),      # RMS error over the rounding scale (verify/precision.py)
    ("precision_honest_rms", pa.float64()),  # the same of the honest computations at the policy
    ("precision_bound", pa.float64()),    # the rule's bound: MARGIN x honest + float32 accumulation
    ("precision_tail", pa.float64()),     # fraction of outputs with a scaled error above TAIL_K x the honest RMS
    ("precision_tail_bound", pa.float64()),  # TAIL_MARGIN x the honest computations' tail + TAIL_SLACK
    ("precision_low", pa.float64()),      # fraction of outputs with float16's mantissa (float32 outputs)
    ("precision_low_bound", pa.float64()),  # the reference's fraction + LOW_SLACK
    ("precision_rel", pa.float64()),      # fraction of outputs with a relative error above RELATIVE_ULPS x room ulps
    ("precision_rel_bound", pa.float64()),  # TAIL_MARGIN x the honest computations' fraction + slack
    ("median_ms", pa.float64()),
    ("p20_ms", pa.float64()),
    ("p80_ms", pa.float64()),
    ("timing_spread", pa.float64()),      # (max - min) / min over repeated medians
    ("synced_ms", pa.float64()),          # host-timed calls with a full device sync (all streams)
    ("bytes", pa.float64()),              # work model at the timing shape
    ("flops", pa.float64()),
    ("achieved_gbps", pa.float64()),
    ("achieved_tflops", pa.float64()),
    ("pct_of_copy_ceiling", pa.float64()),
    ("pct_of_matmul_ceiling", pa.float64()),  # achieved TFLOP/s / measured bf16 matmul TFLOP/s
    ("floor_ms", pa.float64()),           # max(bytes / copy bandwidth, FLOPs / matmul rate), measured
    ("aten_ops", pa.string()),            # operators the verified calls dispatched (comma-separated, rule 14)
    ("reference_ops_used", pa.string()),  # those among the spec's reference_ops: a fallback, not a kernel
    ("library_calls", pa.string()),       # operators that do arithmetic (not layout): a library call, not a kernel
    ("foreign_kernels", pa.string()),     # GPU: launched kernels of library operators or of no own code
    ("kernel_census", pa.bool_()),        # GPU: whether the launched-kernel census (torch.profiler) ran
    ("n_regs", pa.int64()),
    ("n_spills", pa.int64()),             # Triton: spilled registers; CUDA: local_bytes / 4
    ("local_bytes", pa.int64()),          # CUDA: local memory per thread (spills and local arrays)
    ("shared_bytes", pa.int64()),
    ("n_kernels", pa.int64()),
    ("first_call_s", pa.float64()),       # wall time of the first call (JIT compile unless cached)
    ("compile_s", pa.float64()),          # CUDA: NVRTC seconds (cubin load time on a disk-cache hit)
    ("compile_cached", pa.bool_()),       # CUDA: the cubin came from the disk cache (compile_s is a load)
    ("peak_mem_bytes", pa.int64()),
    ("reference_hits", pa.int64()),       # reference computations the worker's memo already held (refmemo)
    ("reference_calls", pa.int64()),      # ... of those the memo was asked for; null: memo off
    # the profile of a version's fastest config (kernelsynth/profiling.py; contract.ProfileResult)
    ("profile", pa.string()),             # "ncu", or "skipped: <why>" / "failed: <why>"
    ("ncu_kernel", pa.string()),          # the kernel the ncu numbers are of (the longest of one call)
    ("ncu_kernels", pa.int64()),          # kernels one call launched
    ("ncu_duration_ms", pa.float64()),    # their GPU time under the profiler (replayed: not a latency)
    ("ncu_dram_pct", pa.float64()),       # DRAM throughput, % of peak sustained
    ("ncu_sm_pct", pa.float64()),         # SM throughput, % of peak sustained
    ("ncu_tensor_pct", pa.float64()),     # tensor pipe active cycles, % of peak sustained
    ("ncu_occupancy_pct", pa.float64()),  # achieved occupancy (active warps), % of the SM's maximum
    ("ncu_l2_hit_pct", pa.float64()),     # L2 sector hit rate, %
    ("ncu_registers", pa.int64()),        # registers per thread (launch)
    ("ncu_local_insts", pa.int64()),      # local-memory load + store instructions executed (spills)
    ("ncu_stalls", pa.string()),          # top stall reasons, cycles per issued instruction
    ("ncu_metrics", pa.string()),         # every metric read, JSON {name: value}
    ("profile_s", pa.float64()),          # the profile job, seconds
    ("verify_s", pa.float64()),           # the correctness protocol (all verify trials), seconds
    ("timing_s", pa.float64()),           # the timed measurement and its integrity checks, seconds
    ("wall_s", pa.float64()),             # the whole job, in the worker
    ("device", pa.string()),
    ("hw_fingerprint", pa.string()),      # the run's hardware (model, driver, libraries): part of the key
    ("device_index", pa.int64()),         # the GPU the job ran on, among those the probe saw (null: unpinned, CPU)
    ("device_fingerprint", pa.string()),  # that GPU's own fingerprint (kernelsynth/devices.py; null: unpinned)
    ("interpret", pa.bool_()),
    ("timestamp", pa.string()),
])


def content_key(**parts: Any) -> str:
    """SHA-256 (hex, 24 chars) of the JSON of ``parts`` with sorted keys."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def group_readable(path: Path) -> None:
    """Give ``path`` the mode a plain ``open()`` would (0666 less the umask): ``mkstemp`` creates
    0600 files, which other members of the group could not read."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename; the
    file gets the umask's mode (:func:`group_readable`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        group_readable(Path(tmp))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_table(path: Path, table: pa.Table) -> None:
    """Write a Parquet file atomically."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def schema_mismatches(row: Dict[str, Any], columns: Iterable[str],
                      schema: Optional[pa.Schema] = None) -> List[Tuple[str, str]]:
    """``[(column, type name of its value)]`` for the ``columns`` of ``row`` whose value the
    column's type in ``schema`` (default :data:`OBSERVATION_SCHEMA`) cannot hold: a str where a
    number goes, an int or bool where a str goes, a bool where a number goes, an int outside
    int64 where a number goes (reported as ``int``). None is always
    allowed; list and struct columns take what pyarrow itself accepts."""
    schema = OBSERVATION_SCHEMA if schema is None else schema
    # pyarrow converts a Python int through int64 even for a float column: a larger one raised
    # ArrowInvalid when the row was written, which ended the run (tests/adversarial/sandbox_s8 int_overflow)
    def int64(v):
        return isinstance(v, int) and not isinstance(v, bool) and -(1 << 63) <= v < (1 << 63)

    scalar = {pa.types.is_string: lambda v: isinstance(v, str),
              pa.types.is_boolean: lambda v: isinstance(v, bool),
              pa.types.is_floating: lambda v: isinstance(v, float) or int64(v),
              pa.types.is_integer: int64}
    bad = []
    for k in columns:
        value = row.get(k)
        if value is None or k not in schema.names:
            continue
        want = schema.field(k).type
        check = next((ok for is_type, ok in scalar.items() if is_type(want)), None)
        if check is not None:
            fits = check(value)
        else:
            try:
                pa.array([value], type=want)
                fits = True
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                fits = False
        if not fits:
            bad.append((k, type(value).__name__))
    return bad


def rows_to_table(rows: Iterable[Dict[str, Any]], schema: pa.Schema) -> pa.Table:
    rows = list(rows)
    for r in rows:
        unknown = set(r) - set(schema.names)
        if unknown:
            raise KeyError(f"columns not in the schema: {sorted(unknown)}")
    table = [{n: r.get(n) for n in schema.names} for r in rows]
    try:
        return pa.Table.from_pylist(table, schema=schema)
    except UnicodeEncodeError:
        # a lone surrogate (a worker's text: "\ud800" pickles, UTF-8 cannot hold it) ended the run
        # (tests/adversarial/sandbox_s8 surrogate_text); such characters are written as escapes
        table = [{n: _utf8(v) for n, v in r.items()} for r in table]
        return pa.Table.from_pylist(table, schema=schema)


def _utf8(value: Any) -> Any:
    """``value`` with characters UTF-8 cannot encode (lone surrogates) written as escapes (``\\ud800``), if a str."""
    if not isinstance(value, str):
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


#: Parquet metadata key of an observation file's tag; key file of a run directory.
TAG_FIELD, KEY_FILE = b"kernelsynth.hmac", ".observation-key"
#: An observation file is one row: anything larger is not one of ours.
MAX_FILE_BYTES = 1 << 20


def observation_tag(key: bytes, name: str, rows: List[Dict[str, Any]]) -> str:
    """HMAC-SHA256 (hex) of ``name`` (the file's name) and ``rows`` (JSON, sorted keys) under ``key``."""
    msg = b"kernelsynth-observations-v1\0" + name.encode() + b"\0" + \
        json.dumps(rows, sort_keys=True, default=str).encode()
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def tagged_table(key: bytes, name: str, rows: Iterable[Dict[str, Any]]) -> pa.Table:
    """``rows`` as an :data:`OBSERVATION_SCHEMA` table whose metadata holds their tag."""
    table = rows_to_table(rows, OBSERVATION_SCHEMA)
    return table.replace_schema_metadata({TAG_FIELD: observation_tag(key, name, table.to_pylist())})


def read_tagged(key: Optional[bytes], path: Path) -> Tuple[Optional[List[Dict[str, Any]]], str]:
    """``(rows, "")`` when ``path`` is a tagged observation table whose tag checks under ``key``,
    else ``(None, why)``. Never raises for a bad file."""
    try:
        if key is None:
            return None, "the run directory has no observation key"
        if path.stat().st_size > MAX_FILE_BYTES and path.parent.name == "observations":
            return None, f"larger than {MAX_FILE_BYTES} bytes"
        pf = pq.ParquetFile(path)
        tag = (pf.schema_arrow.metadata or {}).get(TAG_FIELD, b"").decode()
        if pf.schema_arrow.remove_metadata() != OBSERVATION_SCHEMA:
            return None, "columns differ from the observation schema"
        rows = pf.read().to_pylist()
    except Exception as e:  # noqa: BLE001 - a file we cannot read is a file we do not trust
        return None, f"unreadable ({type(e).__name__}: {e})"[:300]
    if not tag:
        return None, "no authentication tag"
    if not hmac.compare_digest(tag, observation_tag(key, path.name, rows)):
        return None, "authentication tag does not match its content (written by something other than the run)"
    return rows, ""


class ObservationStore:
    """Observations of one run directory (see module docstring).

    ``create_key``: make the run's key when the directory has none (a new run); False for
    directories only read (a merge), whose files then all fail verification.
    ``events``: the integrity events so far (``{"file", "problem", "when", "at"}``), for run.json.
    """

    def __init__(self, run_dir: Path, create_key: bool = True):
        self.run_dir = Path(run_dir)
        self.dir = self.run_dir / "observations"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.events: List[Dict[str, str]] = []
        self.key = self._load_key(create_key)

    def _load_key(self, create: bool) -> Optional[bytes]:
        path = self.run_dir / KEY_FILE
        if path.is_file():
            return bytes.fromhex(path.read_text().strip())
        if not create:
            return None
        key = secrets.token_bytes(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.hex())
        return key

    def has(self, key: str) -> bool:
        return (self.dir / f"{key}.parquet").is_file()

    def append(self, row: Dict[str, Any]) -> None:
        name = f"{row['key']}.parquet"
        atomic_write_table(self.dir / name, tagged_table(self.key, name, [row]))

    def _check(self, path: Path, at: str) -> Optional[List[Dict[str, Any]]]:
        rows, why = read_tagged(self.key, path)
        if rows is not None and (len(rows) != 1 or f"{rows[0]['key']}.parquet" != path.name):
            rows, why = None, "its row's key is not its file name (a copy of another observation)"
        if rows is None:
            aside = self.dir / "untrusted" / f"{path.name}.{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}"
            aside.parent.mkdir(exist_ok=True)
            os.replace(path, aside)
            self.events.append({"file": str(path), "problem": why, "at": at, "moved_to": str(aside),
                                "when": datetime.now(timezone.utc).isoformat()})
        return rows

    def verify(self, at: str = "resume") -> List[Dict[str, str]]:
        """Check every observation file; set aside and record those that fail (their jobs are
        then not on disk: a re-run measures them again). Returns the new events."""
        n = len(self.events)
        for f in sorted(self.dir.glob("*.parquet")):
            self._check(f, at)
        return self.events[n:]

    def read(self, verify: bool = True, at: str = "consolidation") -> List[Dict[str, Any]]:
        """All observations as dicts, ordered by (task, dtype, role, version, config). With
        ``verify`` (the default; what a merge calls) only files whose tag checks; the others are
        set aside and recorded in :attr:`events` under ``at``."""
        rows = []
        for f in sorted(self.dir.glob("*.parquet")):
            got = self._check(f, at) if verify else pq.read_table(f, schema=OBSERVATION_SCHEMA).to_pylist()
            rows += got or []
        return sorted(rows, key=lambda r: (r["task"], r["dtype"], r["role"], r["version"], r["config"]))

    def write_consolidated(self, rows: List[Dict[str, Any]]) -> Path:
        """``<run dir>/observations.parquet``: every row in one tagged table (name "observations.parquet")."""
        path = self.run_dir / "observations.parquet"
        atomic_write_table(path, tagged_table(self.key, path.name, rows))
        return path


def verified_rows(run_dir: Path) -> Tuple[List[Dict[str, Any]], List[Dict[str, str]]]:
    """The observations of ``run_dir`` whose tags check under that run's key, and the integrity
    events of the others (which are set aside, never returned). For merges of sweeps."""
    store = ObservationStore(run_dir, create_key=False)
    rows = store.read(verify=True, at="merge")
    return rows, store.events


def run_rows(run_dir: Path) -> List[Dict[str, Any]]:
    """The observations of ``run_dir`` for reports (bench/*.py): its consolidated
    ``observations.parquet`` when the run finished, else its per-observation files (a run that
    was interrupted: what it measured so far). Tags are not checked (read-only reports; a merge
    uses :func:`verified_rows`). Raises FileNotFoundError when the directory has neither."""
    run_dir = Path(run_dir)
    if (run_dir / "observations.parquet").is_file():
        return pq.read_table(run_dir / "observations.parquet").to_pylist()
    files = sorted((run_dir / "observations").glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{run_dir}: no observations.parquet and no observations/*.parquet")
    return [r for f in files for r in pq.read_table(f, schema=OBSERVATION_SCHEMA).to_pylist()]
