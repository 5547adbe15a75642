"""Charts of a dataset part (matplotlib): per task, hardware target and dtype, a roofline and a ladder.

* **roofline** (``<task>-<dtype>-<hw>-roofline.png``): each version's achieved TFLOP/s against its
  arithmetic intensity (FLOPs per byte of its work model), under the roof of the ceilings in
  effect (min(matmul TFLOP/s, intensity x copy GB/s)), with the measured roof when a verified
  observation raised a ceiling (kernelsynth/ceilings.py) and the datasheet's. A task without FLOPs
  (data movement) has no intensity to speak of: its chart is each version's achieved GB/s against
  the copy ceilings (every measured copy method, the ceiling in effect, the datasheet). Eager
  PyTorch and torch.compile are marked apart from the versions.
* **ladder** (``<task>-<dtype>-<hw>-ladder.png``): the latency of each version (its fastest
  verified config) beside eager and torch.compile, each bar labelled with its ms and its speedup
  over eager.

The numbers are the observations' own (median latency, achieved GB/s and TFLOP/s); nothing is
drawn that was not measured. Without latencies (the Triton interpreter) nothing can be drawn: the
chart is skipped and the reason recorded. Without matplotlib every chart is skipped with that
reason. Charts are written into ``<dataset dir>/charts/`` (inside the run or sweep directory) and
embedded in the dataset card (kernelsynth/stages/synthesis.py); a merge draws them again from the
merged observations. No torch here.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Dict, List, Optional

log = logging.getLogger(__name__)

#: Why no chart is drawn without timings.
UNTIMED = "no latencies: the Triton interpreter runs no timings (correctness only), so there is nothing to draw"


def matplotlib_problem() -> Optional[str]:
    """None when matplotlib imports here, else why not (the charts are then skipped with it)."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except Exception as e:  # noqa: BLE001 - ImportError, or a broken install
        return f"matplotlib is not available ({type(e).__name__}: {e}); pip install matplotlib to draw the charts"
    return None


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png", metadata={"Software": None}, bbox_inches="tight")  # no version stamp: same data, same bytes
    tmp.replace(path)


def _label(o: Dict[str, Any]) -> str:
    if o["role"] == "baseline":
        return {"eager": "eager PyTorch", "compile": "torch.compile"}.get(o["version"], o["version"])
    return f"{o['version']} {o['name']}"


def series(chosen: List[Optional[Dict[str, Any]]], baselines: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The timed points of one chart, in ladder order then eager, torch.compile: the chosen
    observation of each version (None entries and untimed ones left out) and the baselines."""
    out = [o for o in chosen if o is not None and o.get("median_ms") is not None]
    order = {"eager": 0, "compile": 1}
    out += sorted((b for b in baselines if b.get("median_ms") is not None), key=lambda b: order.get(b["version"], 9))
    return out


def _label_offsets(xs: List[float], ys: List[float], close: float = 0.04, step: float = 8.0) -> List[float]:
    """Vertical label offsets (points) so that labels of points at about the same place on a log-log
    chart (within ``close`` decades in both coordinates: v0 = eager, a version beside torch.compile)
    do not overlap: each such point's label goes ``step`` points below the one above it."""
    order = sorted(range(len(ys)), key=lambda i: -ys[i])
    out = [0.0] * len(ys)
    placed: List[int] = []
    for i in order:
        near = [j for j in placed if abs(math.log10(xs[i] / xs[j])) < close and abs(math.log10(ys[i] / ys[j])) < 3 * close]
        if near:
            out[i] = min(out[j] for j in near) - step
        placed.append(i)
    return out


def roofline(path: Path, title: str, points: List[Dict[str, Any]], hw) -> None:
    """Draw the roofline (or, without FLOPs, the bandwidth chart) of ``points`` to ``path``."""
    fig = _figure(7.5, 4.6)
    ax = fig.add_subplot(1, 1, 1)
    colors = {"candidate": "tab:blue", "baseline": "tab:gray", "inductor": "tab:green"}
    markers = {"eager": "s", "compile": "^"}
    if all(o.get("flops") and o.get("bytes") and o.get("achieved_tflops") for o in points):
        ai = [o["flops"] / o["bytes"] for o in points]
        lo, hi = min(ai) / 8, max(ai) * 8
        xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]

        def roof(gbps, tflops, style, label):
            if gbps and tflops:
                ax.plot(xs, [min(tflops, x * gbps / 1e3) for x in xs], style, lw=1.4, label=label)

        roof(hw.copy_gbps, hw.matmul_tflops, "k-", f"ceilings in effect: {hw.copy_gbps:.0f} GB/s, "
                                                  f"{hw.matmul_tflops:.0f} TFLOP/s (bf16 matmul)")
        if (hw.copy_gbps_measured, hw.matmul_tflops_measured) != (hw.copy_gbps, hw.matmul_tflops) \
                and hw.copy_gbps_measured:
            roof(hw.copy_gbps_measured, hw.matmul_tflops_measured, "k:", "best measured methods")
        peak_tf = (hw.peak_tflops or {}).get("bfloat16")
        roof(hw.peak_gbps, peak_tf, "r--", "datasheet")
        for (o, x), dy in zip(zip(points, ai), _label_offsets(ai, [o["achieved_tflops"] for o in points])):
            ax.scatter([x], [o["achieved_tflops"]], s=55, zorder=3, color=colors[o["role"]],
                       marker=markers.get(o["version"], "o") if o["role"] == "baseline" else "o")
            ax.annotate(f"{_label(o)}: {o['achieved_tflops']:.1f}", (x, o["achieved_tflops"]), fontsize=7,
                        xytext=(6, dy), textcoords="offset points", va="center")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP per byte of the work model)")
        ax.set_ylabel("achieved TFLOP/s")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    else:
        labels = [_label(o) for o in points]
        values = [o.get("achieved_gbps") or 0.0 for o in points]
        ax.bar(range(len(points)), values, color=[colors[o["role"]] for o in points])
        for i, v in enumerate(values):
            pct = points[i].get("pct_of_copy_ceiling")
            ax.text(i, v, f"{v:.0f}" + (f"\n{pct:.1f}%" if pct is not None else ""), ha="center", va="bottom",
                    fontsize=7)
        styles = iter(["--", "-.", ":", (0, (3, 1, 1, 1))])
        for m in hw.ceiling_methods:
            if m.get("ceiling") == "copy" and m.get("value") is not None:
                ax.axhline(m["value"], color="tab:green", lw=0.9, ls=next(styles, ":"),
                           label=f"copy, {m['method']}: {m['value']:.0f} GB/s")
        if hw.copy_gbps:
            raised = hw.copy_gbps_measured and hw.copy_gbps != hw.copy_gbps_measured
            ax.axhline(hw.copy_gbps, color="k", lw=1.4, label=f"copy ceiling in effect: {hw.copy_gbps:.0f} GB/s"
                                                              + (" (raised by an observation)" if raised else ""))
        if hw.peak_gbps:
            ax.axhline(hw.peak_gbps, color="tab:red", lw=1.0, ls="--", label=f"datasheet {hw.peak_gbps:.0f} GB/s")
        ax.set_xticks(range(len(points)))
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel("achieved GB/s (bytes read + written)")
        top = max(values + [hw.copy_gbps or 0.0, hw.peak_gbps or 0.0])
        ax.set_ylim(0, top * 1.18)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
        title += " (0 FLOPs: bandwidth against the copy ceilings)"
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    _save(fig, path)


def ladder(path: Path, title: str, points: List[Dict[str, Any]]) -> None:
    """Draw the latency of every point (horizontal bars, the ladder top-down) to ``path``."""
    fig = _figure(7.5, 0.9 + 0.42 * len(points))
    ax = fig.add_subplot(1, 1, 1)
    eager = next((o["median_ms"] for o in points if o["role"] == "baseline" and o["version"] == "eager"), None)
    ys = list(range(len(points)))[::-1]
    ax.barh(ys, [o["median_ms"] for o in points],
            color=["tab:blue" if o["role"] == "candidate" else "tab:gray" for o in points])
    for y, o in zip(ys, points):
        text = f" {o['median_ms']:.4f} ms" + (f", {eager / o['median_ms']:.2f}x eager" if eager else "")
        ax.text(o["median_ms"], y, text, va="center", fontsize=7)
    ax.set_yticks(ys)
    ax.set_yticklabels([_label(o) for o in points], fontsize=7)
    ax.set_xlabel("latency, ms (median of do_bench, L2 flushed)")
    ax.set_xlim(0, max(o["median_ms"] for o in points) * 1.45)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    _save(fig, path)


def draw(out_dir: Path, task: str, hw, trajectories: List[Dict[str, Any]],
         observations: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Draw the roofline and ladder chart of every trajectory (one per dtype) into ``out_dir``.
    Returns one entry per chart: ``task``, ``dtype``, ``kind`` (roofline, ladder), ``path``
    (relative to ``out_dir``'s parent, e.g. ``charts/x.png``; None when not drawn) and ``reason``
    (why not; None when drawn)."""
    by_key = {o["key"]: o for o in observations}
    problem = ...  # matplotlib is imported at the first chart with points (about 0.7 s: none on an untimed run)
    out = []
    for t in trajectories:
        chosen = [by_key.get(k) if k else None for k in t["observation_keys"]]
        base = [by_key[k] for k in t["baseline_keys"] if k in by_key]
        points = series(chosen, base)
        if points and problem is ...:
            problem = matplotlib_problem()
        reason = (problem or None) if points else UNTIMED
        for kind in ("roofline", "ladder"):
            source = "" if t.get("source", "ladder") == "ladder" else f"-{t['source']}"  # v0 -> inductor: its own file
            name = f"{task}-{t['dtype']}-{hw.target}{source}-{kind}.png"
            entry = {"task": task, "dtype": t["dtype"], "kind": kind, "path": None, "reason": reason}
            if reason is None:
                title = f"{task} {t['dtype']} on {hw.device_name}: {kind}"
                try:
                    if kind == "roofline":
                        roofline(Path(out_dir) / name, title, points, hw)
                    else:
                        ladder(Path(out_dir) / name, title, points)
                    entry["path"] = f"{Path(out_dir).name}/{name}"
                except Exception as e:  # noqa: BLE001 - a chart never fails the run
                    entry["reason"] = f"drawing failed: {type(e).__name__}: {e}"[:300]
                    log.warning("chart %s not drawn: %s", name, entry["reason"])
            out.append(entry)
    return out
