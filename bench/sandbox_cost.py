"""Compare sandbox on/off runs written by bench/sandbox_cost.sh: verdicts per observation key
(must be equal) and the medians of verify_s and wall_s over candidate observations (the
sandbox may add at most 10 %), and of the interval between consecutive candidate observations'
timestamps (what a candidate costs the run, the parent's and the worker's work outside the job's
own wall_s included: result transfer, the independent check, compile-cache promotion, the PID
namespace's cleanup). Prints a Markdown table for BENCHMARKS.md; exits 1 when a verdict differs or
a median grows by more than 10 %."""

import datetime
import json
import statistics
import sys
from pathlib import Path

from kernelsynth.store import run_rows


def rows(run: Path):
    return {r["key"]: r for r in run_rows(run)}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def interval(d):
    """Median seconds between consecutive candidate observations' timestamps."""
    ts = sorted(t if isinstance(t, datetime.datetime) else datetime.datetime.fromisoformat(str(t))
                for t in (r["timestamp"] for r in d.values() if r["role"] != "baseline") if t is not None)
    return median([(b - a).total_seconds() for a, b in zip(ts, ts[1:])])


def main(out: Path) -> int:
    bad = 0
    print("| task | observations | verdicts equal | verify_s median off / on | wall_s median off / on | interval median off / on | first_call_s median off / on | sandbox |")
    print("|---|---|---|---|---|---|---|---|")
    for task in ("flip2d", "conv_relu_maxpool"):
        if not ((out / f"{task}-on").is_dir() and (out / f"{task}-off").is_dir()):
            continue
        off, on = rows(out / f"{task}-off"), rows(out / f"{task}-on")
        status = (json.loads((out / f"{task}-on" / "run.json").read_text())["sandbox"]["status"]
                  if (out / f"{task}-on" / "run.json").is_file() else "(run interrupted)")
        differ = sorted(k for k in off.keys() | on.keys() if (off.get(k) or {}).get("verdict") != (on.get(k) or {}).get("verdict"))
        for k in differ:
            o, n = off.get(k) or {}, on.get(k) or {}
            print(f"  verdict differs: {o.get('version') or n.get('version')} {o.get('dtype') or n.get('dtype')} "
                  f"{o.get('config') or n.get('config')}: off={o.get('verdict')} ({(o.get('reason') or '')[:120]}) "
                  f"on={n.get('verdict')} ({(n.get('reason') or '')[:120]})", file=sys.stderr)
        cand = lambda d: [r for r in d.values() if r["role"] != "baseline"]  # noqa: E731
        m = {(col, side): median([r[col] for r in cand(d)]) for col in ("verify_s", "wall_s", "first_call_s")
             for side, d in (("off", off), ("on", on))}
        m[("interval", "off")], m[("interval", "on")] = interval(off), interval(on)
        ratio = {col: m[(col, "on")] / m[(col, "off")] for col in ("verify_s", "wall_s", "interval")}
        print(f"| {task} | {len(off)} / {len(on)} | {'yes' if not differ else f'NO ({len(differ)})'} | "
              f"{m[('verify_s', 'off')]:.3f} / {m[('verify_s', 'on')]:.3f} ({100 * (ratio['verify_s'] - 1):+.1f} %) | "
              f"{m[('wall_s', 'off')]:.3f} / {m[('wall_s', 'on')]:.3f} ({100 * (ratio['wall_s'] - 1):+.1f} %) | "
              f"{m[('interval', 'off')]:.3f} / {m[('interval', 'on')]:.3f} ({100 * (ratio['interval'] - 1):+.1f} %) | "
              f"{m[('first_call_s', 'off')]:.3f} / {m[('first_call_s', 'on')]:.3f} | {status} |")
        bad += bool(differ) + sum(r > 1.10 for r in ratio.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/sandbox_cost")))
