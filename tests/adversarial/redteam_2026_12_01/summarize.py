"""Print one line per observation of a kernelsynth run dir: name, dtype, verdict, fault, reason,
library_calls, foreign_kernels, precision (rms / bound), median_ms, floor_ms."""
import glob, sys
import pyarrow.parquet as pq
rows = []
for d in sys.argv[1:]:
    for f in glob.glob(f"{d}/observations/*.parquet"):
        rows += pq.read_table(f).to_pylist()
rows.sort(key=lambda r: (str(r.get("name")), str(r.get("dtype"))))
for r in rows:
    prec = ""
    if r.get("precision_rms") is not None:
        prec = f"rms {r['precision_rms']:.2e}/bound {r['precision_bound']:.2e}"
    print(f"{r.get('role')}|{r.get('name')}|{r.get('dtype')}|{r.get('verdict')}|{r.get('fault')}|"
          f"lib={r.get('library_calls')}|foreign={r.get('foreign_kernels')}|{prec}|"
          f"ms={r.get('median_ms')}|floor={r.get('floor_ms')}|maxerr={r.get('max_abs_err')}|{(r.get('reason') or '')[:400]}")
