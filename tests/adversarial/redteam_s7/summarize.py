"""One line per observation of kernelsynth run directories (python3 summarize.py DIR...):
name | dtype | verdict | fault | library_calls | foreign_kernels | precision rms/bound, tail/bound,
low/bound | max_abs_err | reason (first 300 characters)."""
import glob
import sys

import pyarrow.parquet as pq


def fmt(r, a, b):
    return f"{r[a]:.2e}/{r[b]:.2e}" if r.get(a) is not None and r.get(b) is not None else "-"


rows = []
for d in sys.argv[1:]:
    parts = glob.glob(f"{d}/observations/*.parquet")  # a finished run also writes observations.parquet (the same rows)
    for f in parts or glob.glob(f"{d}/observations.parquet"):
        rows += pq.read_table(f).to_pylist()
rows.sort(key=lambda r: (str(r.get("name")), str(r.get("dtype"))))
for r in rows:
    print(" | ".join(str(v) for v in (
        r.get("name"), r.get("dtype"), r.get("verdict"), r.get("fault"), r.get("library_calls"),
        r.get("foreign_kernels"), "rms " + fmt(r, "precision_rms", "precision_bound"),
        "tail " + fmt(r, "precision_tail", "precision_tail_bound"), "low " + fmt(r, "precision_low", "precision_low_bound"),
        r.get("max_abs_err"), (r.get("reason") or "")[:300])))
