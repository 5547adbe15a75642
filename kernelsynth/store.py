"""The observation store: one row per measured attempt, appended to disk as it completes.

Layout: ``<run dir>/observations/<key>.parquet``, one small Parquet file per observation, each
written atomically (temporary file + rename), so a crash never leaves a half-written row and a
re-run with the same run directory skips every key already on disk. ``read()`` returns all rows
as one table with :data:`OBSERVATION_SCHEMA`, the single declaration of the columns.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List

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
                                          # exit_called, tampering, timing_integrity, audit, screened
    ("reason", pa.string()),
    ("trials", pa.int64()),
    ("verify_shapes", pa.string()),       # JSON list of shapes
    ("timing_shape", pa.string()),        # JSON shape, or null when not timed
    ("max_abs_err", pa.float64()),
    ("max_rel_err", pa.float64()),
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
    ("aten_ops", pa.string()),            # aten operators one call dispatches (comma-separated)
    ("reference_ops_used", pa.string()),  # those among the spec's reference_ops: a fallback, not a kernel
    ("n_regs", pa.int64()),
    ("n_spills", pa.int64()),             # Triton: spilled registers; CUDA: local_bytes / 4
    ("local_bytes", pa.int64()),          # CUDA: local memory per thread (spills and local arrays)
    ("shared_bytes", pa.int64()),
    ("n_kernels", pa.int64()),
    ("first_call_s", pa.float64()),       # wall time of the first call (JIT compile unless cached)
    ("compile_s", pa.float64()),          # CUDA: NVRTC seconds (cubin load time on a disk-cache hit)
    ("compile_cached", pa.bool_()),       # CUDA: the cubin came from the disk cache (compile_s is a load)
    ("peak_mem_bytes", pa.int64()),
    ("verify_s", pa.float64()),           # the correctness protocol (all verify trials), seconds
    ("timing_s", pa.float64()),           # the timed measurement and its integrity checks, seconds
    ("wall_s", pa.float64()),             # the whole job, in the worker
    ("device", pa.string()),
    ("hw_fingerprint", pa.string()),
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


def rows_to_table(rows: Iterable[Dict[str, Any]], schema: pa.Schema) -> pa.Table:
    rows = list(rows)
    for r in rows:
        unknown = set(r) - set(schema.names)
        if unknown:
            raise KeyError(f"columns not in the schema: {sorted(unknown)}")
    return pa.Table.from_pylist([{n: r.get(n) for n in schema.names} for r in rows], schema=schema)


class ObservationStore:
    """Observations of one run directory (see module docstring)."""

    def __init__(self, run_dir: Path):
        self.dir = Path(run_dir) / "observations"
        self.dir.mkdir(parents=True, exist_ok=True)

    def has(self, key: str) -> bool:
        return (self.dir / f"{key}.parquet").is_file()

    def append(self, row: Dict[str, Any]) -> None:
        atomic_write_table(self.dir / f"{row['key']}.parquet", rows_to_table([row], OBSERVATION_SCHEMA))

    def read(self) -> List[Dict[str, Any]]:
        """All observations as dicts, ordered by (task, dtype, role, version, config)."""
        files = sorted(self.dir.glob("*.parquet"))
        if not files:
            return []
        rows = pa.concat_tables([pq.read_table(f, schema=OBSERVATION_SCHEMA) for f in files]).to_pylist()
        return sorted(rows, key=lambda r: (r["task"], r["dtype"], r["role"], r["version"], r["config"]))
