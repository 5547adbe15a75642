"""Cost of the independent check's output transport (VERIFICATION.md rule 18) per audited output,
and the parent's time outside the workers in a run.

    python bench/audit_transport.py [--transport [--gpu]] [--run DIR ...]

1. With ``--transport``: for the GPU plan's large derived outputs (flip2d's joint shape 5853 x 5541 in float32, bfloat16,
   int32 -- ``exact`` --; softmax_rows' 5017 x 6091 float32 -- ``allclose``, always whole), the
   seconds of each step with the old threshold (256 MiB: whole bytes) and the current
   ``verify.transport.DIGEST_MAX_BYTES``: the worker's ``digest`` (on the GPU with ``--gpu``), the
   pickling through the pipe (dumps + loads), and the parent's ``audit.audit_problem`` against the
   oracle's digest of the same output. Medians of 3.
2. With ``--run DIR``: per run directory, the candidate observations in completion order, the
   sum of the workers' ``wall_s``, the run's span from the first to the last observation, and the
   median gap between consecutive observations minus the later one's ``wall_s`` (the time the
   parent spends outside the worker per candidate: result transfer, the audit, dispatch).
"""

import pickle
import statistics
import sys
import time


def transport(gpu: bool):
    import torch

    from kernelsynth.audit import audit_problem
    from kernelsynth.verify import transport as tr

    dev = torch.device("cuda" if gpu else "cpu")
    cases = [("exact", (5853, 5541), torch.float32), ("exact", (5853, 5541), torch.bfloat16),
             ("exact", (5853, 5541), torch.int32), ("allclose", (5017, 6091), torch.float32)]
    current = tr.DIGEST_MAX_BYTES
    print(f"{'comparison':<9} {'shape':<10} {'dtype':<9} {'threshold':>10} {'digest_s':>9} {'pipe_s':>8} "
          f"{'audit_s':>8} {'total_s':>8} {'MiB':>6}")
    for comp, shape, dtype in cases:
        g = torch.Generator(device=dev).manual_seed(0)
        x = (torch.randint(-2**30, 2**30, shape, generator=g, device=dev, dtype=dtype) if dtype == torch.int32
             else torch.randn(shape, generator=g, device=dev, dtype=dtype))
        ref = x.double() if comp == "allclose" else x
        for limit in (256 * 2**20, current):
            tr.DIGEST_MAX_BYTES = limit
            rd = tr.digest(ref, comp)  # the oracle's, computed once per run
            refs = {"derived:0:0": {"where": "shape x, trial 0", "digest": rd, "dtype": str(dtype)}}
            steps = {"digest": [], "pipe": [], "audit": []}
            for _ in range(3):
                t0 = time.perf_counter()
                d = tr.digest(x, comp)
                if gpu:
                    torch.cuda.synchronize()
                t1 = time.perf_counter()
                got = pickle.loads(pickle.dumps({"derived:0:0": d}, protocol=pickle.HIGHEST_PROTOCOL))
                t2 = time.perf_counter()
                problem = audit_problem(got, refs, comp, {"atol": 1e-5, "rtol": 1e-5})
                t3 = time.perf_counter()
                assert problem is None, problem
                for k, v in zip(steps, (t1 - t0, t2 - t1, t3 - t2)):
                    steps[k].append(v)
            med = {k: statistics.median(v) for k, v in steps.items()}
            size = len(pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL)) / 2**20
            print(f"{comp:<9} {'x'.join(map(str, shape)):<10} {str(dtype)[6:]:<9} {limit // 2**20:>7} MiB "
                  f"{med['digest']:>9.3f} {med['pipe']:>8.3f} {med['audit']:>8.3f} {sum(med.values()):>8.3f} {size:>6.1f}")
    tr.DIGEST_MAX_BYTES = current


def gaps(run_dir: str):
    from datetime import datetime

    from kernelsynth.store import run_rows

    rows = [r for r in run_rows(run_dir) if r["role"] != "baseline" and r.get("wall_s")]
    rows.sort(key=lambda r: r["timestamp"])
    ts = [datetime.fromisoformat(r["timestamp"]).timestamp() for r in rows]
    outside = [b - a - r["wall_s"] for a, b, r in zip(ts, ts[1:], rows[1:])]
    span = ts[-1] - ts[0] if len(ts) > 1 else 0.0
    print(f"{run_dir}: {len(rows)} observations, sum wall_s {sum(r['wall_s'] for r in rows):.1f} s, span "
          f"{span:.1f} s, median (gap - wall_s) {statistics.median(outside) if outside else float('nan'):.3f} s")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--transport" in args:
        transport("--gpu" in args)
    runs = [a for i, a in enumerate(args) if i > 0 and args[i - 1] == "--run"]
    for d in runs:
        gaps(d)
