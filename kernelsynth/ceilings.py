"""Ceilings that are ceilings: the measured ones, raised by a verified observation above them.

The copy ceiling (GB/s) and the matmul ceiling (TFLOP/s) are each the best of several measured
methods (:func:`kernelsynth.timing.measure_ceilings`, kept in ``hw.ceiling_methods``). When a
verified, timed observation of the spec's own versions or baselines (never an external
candidate) moves more than :data:`RAISE_MARGIN` above a ceiling, no method found the device's
real limit: the ceiling in effect becomes that observation's achieved bandwidth (or rate), and
``hw.ceiling_corrections`` says which observation raised it and from what. Percentages of a
ceiling and the roofline floor are then recomputed against the ceiling in effect
(:func:`derive`), so no version reports more than 100% of it. references/EXPLORATION.md,
"Ceilings".

The raise is a pure function of the measured ceilings and the observations (:func:`correct`):
exploration applies it after its jobs, a merge applies it again to the merged observations, and
both give the same numbers. No torch here.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

#: A ceiling is raised only by an observation more than this fraction above it (run-to-run noise
#: of the ceiling's own measurement stays inside it).
RAISE_MARGIN = 0.01

#: The ceilings and the observation column that can raise each: (hw field, measured twin,
#: observation column, unit, name in the text).
CEILINGS = (("copy_gbps", "copy_gbps_measured", "achieved_gbps", "GB/s", "copy"),
            ("matmul_tflops", "matmul_tflops_measured", "achieved_tflops", "TFLOP/s", "matmul"))


def derive(row: Dict[str, Any], hw) -> Dict[str, Any]:
    """Set the derived columns of a timed observation from its work model and latency: achieved
    GB/s and TFLOP/s, % of the copy and matmul ceilings in effect, and the roofline floor in ms
    (the larger of bytes / copy bandwidth and FLOPs / matmul rate). Returns ``row``."""
    ms = row.get("median_ms")
    if not ms:
        return row
    if row.get("bytes"):
        row["achieved_gbps"] = row["bytes"] / (ms * 1e-3) / 1e9
        if hw.copy_gbps:
            row["pct_of_copy_ceiling"] = 100.0 * row["achieved_gbps"] / hw.copy_gbps
            row["floor_ms"] = row["bytes"] / (hw.copy_gbps * 1e9) * 1e3
    if row.get("flops"):
        row["achieved_tflops"] = row["flops"] / (ms * 1e-3) / 1e12
        if hw.matmul_tflops:
            row["pct_of_matmul_ceiling"] = 100.0 * row["achieved_tflops"] / hw.matmul_tflops
            # compute floor: FLOPs at the measured bf16 tensor-core rate (TF32 and float32 peak lower,
            # so this floor is conservative for them)
            floor = row["bytes"] / (hw.copy_gbps * 1e9) * 1e3 if row.get("bytes") and hw.copy_gbps else 0.0
            row["floor_ms"] = max(floor, row["flops"] / (hw.matmul_tflops * 1e12) * 1e3)
    return row


def _label(o: Dict[str, Any]) -> str:
    what = "torch.compile" if o["version"] == "compile" else ("eager PyTorch" if o["version"] == "eager"
                                                              else f"{o['version']} ({o['name']})")
    return f"{o['task']} {what}, {o['dtype']}, config {o['config']}"


def eligible(o: Dict[str, Any], spec_sha256: Optional[str], fingerprint: Optional[str] = None) -> bool:
    """Whether an observation may raise a ceiling: verified, timed, a spec version or a baseline
    (never ``external``), of the spec in question (``spec_sha256``; None: any), measured on the
    hardware in question (``fingerprint``, the observation's ``hw_fingerprint``; None: any). A
    merge can group runs of another device under one target (red team s35 D: a faster GPU's
    observation raised a slower one's copy ceiling)."""
    return (o.get("role") in ("candidate", "baseline") and o.get("verdict") == "accepted"
            and o.get("median_ms") is not None and (spec_sha256 is None or o.get("spec_sha256") == spec_sha256)
            and (fingerprint is None or o.get("hw_fingerprint") == fingerprint))


def correct(hw, observations: List[Dict[str, Any]], spec_sha256: Optional[str] = None) -> List[Dict[str, Any]]:
    """Set the ceilings in effect on ``hw`` from its measured ceilings and ``observations`` (see
    module docstring), record the raises in ``hw.ceiling_corrections``, and recompute every
    observation's derived columns (:func:`derive`, in place). Returns the corrections."""
    corrections = []
    for o in observations:  # the achieved rates (they do not depend on any ceiling)
        derive(o, hw)
    for field, measured_field, column, unit, name in CEILINGS:
        measured = getattr(hw, measured_field)
        if measured is None:
            measured = getattr(hw, field)
            setattr(hw, measured_field, measured)
        setattr(hw, field, measured)
        if measured is None:
            continue
        above = [o for o in observations if eligible(o, spec_sha256, getattr(hw, "fingerprint", None)) and o.get(column)]
        top = max(above, key=lambda o: (o[column], o["key"]), default=None)
        if top is not None and top[column] > measured * (1 + RAISE_MARGIN):
            setattr(hw, field, top[column])
            corrections.append({
                "ceiling": name, "measured": measured, "raised_to": top[column], "unit": unit,
                "observation": top["key"],
                "what": (f"the {name} ceiling is {top[column]:.0f} {unit}, the achieved {unit} of the verified "
                         f"observation {top['key']} ({_label(top)}, {top['median_ms']:.4f} ms), "
                         f"{100 * (top[column] / measured - 1):.1f}% above the best measured method "
                         f"({measured:.0f} {unit})")})
    hw.ceiling_corrections = corrections
    for o in observations:
        derive(o, hw)
    return corrections


def same_hardware(rows: List[Dict[str, Any]], fingerprint: str) -> Tuple[List[Dict[str, Any]], int]:
    """(the rows measured on ``fingerprint``, how many others were set aside). A run directory
    resumed on another machine, or a merge of jobs of one target on different devices, drivers or
    libraries, holds rows of several fingerprints; ratios and percentages mix only rows of one
    (red team s35 D1: a merged record took v0 from one device and v5 from another, 4.81x v0 and
    106% of the copy ceiling). The set-aside rows stay on disk."""
    mine = [r for r in rows if r.get("hw_fingerprint") == fingerprint]
    return mine, len(rows) - len(mine)
