"""The record (one dataset row) in the case format of the seeds, declared once as ``datasets.Features``.

:data:`FEATURES` is the schema; :func:`build_record` renders one accepted trajectory into it.
Every number in a record's text is formatted from an observation; none is written by hand.
Field meanings are in references/SYNTHESIS.md (and in the dataset card, generated from
:data:`FIELD_DOCS`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from datasets import Features, Sequence, Value

from . import __version__, backends
from .hardware import Hardware
from .profiling import claim, short_claim
from .spec import TaskSpec

log = logging.getLogger(__name__)

#: Config keys that describe this machine, not the case; left out of provenance.
LOCAL_KEYS = ("cache_dir", "verbose")

_f64, _i64, _str, _bool = Value("float64"), Value("int64"), Value("string"), Value("bool")

VERSION_FEATURES = {
    "version": _str, "name": _str, "technique": _str, "rationale": _str, "code": _str, "config": _str,
    "verdict": _str, "median_ms": _f64, "p20_ms": _f64, "p80_ms": _f64, "achieved_gbps": _f64,
    "pct_of_copy_ceiling": _f64, "achieved_tflops": _f64, "pct_of_matmul_ceiling": _f64,
    "speedup_vs_v0": _f64, "speedup_vs_eager": _f64, "n_regs": _i64,
    "n_spills": _i64, "shared_bytes": _i64, "max_rel_err": _f64, "trials": _i64,
    # the profile of this config (kernelsynth/profiling.py): "ncu", or "skipped: ..."/"failed: ..."
    "profile": _str, "ncu_kernel": _str, "ncu_kernels": _i64, "ncu_dram_pct": _f64, "ncu_sm_pct": _f64,
    "ncu_tensor_pct": _f64, "ncu_occupancy_pct": _f64, "ncu_l2_hit_pct": _f64, "ncu_registers": _i64,
    "ncu_local_insts": _i64, "ncu_stalls": _str,
}

#: The profile columns a version of the trajectory carries (observation columns of the same name).
PROFILE_FIELDS = ("profile", "ncu_kernel", "ncu_kernels", "ncu_dram_pct", "ncu_sm_pct", "ncu_tensor_pct",
                  "ncu_occupancy_pct", "ncu_l2_hit_pct", "ncu_registers", "ncu_local_insts", "ncu_stalls")

#: One turn of the multi-turn form: TRL / transformers chat format with tool calls. ``tool_calls``
#: is set on assistant turns that submit a version; ``name`` on tool turns (the tool that answered).
AGENT_MESSAGE = {
    "role": _str, "content": _str, "name": _str,
    "tool_calls": [{"type": _str, "function": {"name": _str, "arguments": {"version": _str, "code": _str}}}],
}
#: The tool the multi-turn form calls, as a JSON schema (what ``apply_chat_template(tools=...)`` takes).
TOOL_SCHEMA = {"type": _str, "function": {
    "name": _str, "description": _str,
    "parameters": {"type": _str, "required": Sequence(_str),
                   "properties": {"version": {"type": _str, "description": _str},
                                  "code": {"type": _str, "description": _str}}}}}
TOOL_NAME = "verify_and_time"

FEATURES = Features({
    "id": _str,
    "task": _str,
    "category": _str,
    "backend": _str,
    "dtype": _str,
    "precision_policy": _str,
    "hardware": {"target": _str, "name": _str, "arch": _str, "sm_count": _i64, "l2_bytes": _i64,
                 "driver": _str, "interpret": _bool, "mismatch": _bool, "copy_gbps": _f64,
                 "matmul_tflops": _f64, "peak_gbps": _f64, "peak_source": _str,
                 "copy_gbps_measured": _f64, "matmul_tflops_measured": _f64,
                 "ceiling_methods": [{"ceiling": _str, "method": _str, "value": _f64, "unit": _str,
                                      "detail": _str, "error": _str}],
                 "ceiling_note": _str},
    "environment": _str,
    "question": _str,
    "trajectory": [VERSION_FEATURES],
    "trajectory_text": _str,
    "answer": _str,
    "answer_code": _str,
    "why": _str,
    "metrics": {"eager_ms": _f64, "compile_ms": _f64, "v0_ms": _f64, "best_ms": _f64, "best_version": _str,
                "speedup_vs_v0": _f64, "speedup_vs_eager": _f64, "speedup_vs_compile": _f64,
                "achieved_gbps": _f64, "pct_of_copy_ceiling": _f64, "achieved_tflops": _f64,
                "pct_of_matmul_ceiling": _f64, "n_regs": _i64, "n_spills": _i64,
                "max_rel_err": _f64, "trials": _i64, "ncu_dram_pct": _f64, "ncu_sm_pct": _f64,
                "ncu_tensor_pct": _f64, "ncu_occupancy_pct": _f64},
    "verification": {"passed": _bool, "performance_verified": _bool, "comparison": _str, "trials": _i64,
                     "shapes": Sequence(_str), "timing_shape": _str, "seed": _i64, "poisoned_outputs": _bool,
                     "precision_policy": _str, "precision_rms": _f64, "precision_honest_rms": _f64,
                     "precision_bound": _f64, "precision_tail": _f64, "precision_tail_bound": _f64,
                     "precision_low": _f64, "precision_low_bound": _f64, "precision_rel": _f64,
                     "precision_rel_bound": _f64},
    "messages": [{"role": _str, "content": _str}],
    "agent_messages": [AGENT_MESSAGE],
    "tools": [TOOL_SCHEMA],
    "provenance": {"kernelsynth_version": _str, "spec_sha256": _str, "torch": _str, "triton": _str,
                   "cuda": _str, "driver": _str, "gpu": _str, "python": _str, "date": _str,
                   "hw_fingerprint": _str, "config": _str},
})

FIELD_DOCS = {
    "id": "stable identifier: task, dtype, hardware target and a hash of the chosen observations",
    "task": "operator task (specs/<task>/)",
    "category": "task category from the spec (data_movement, fused_conv, ...)",
    "backend": "backend of the final kernel (triton, cuda)",
    "dtype": "element dtype of the case",
    "precision_policy": "arithmetic precision of reference and candidates in this dtype (e.g. TF32 for float32 convolutions); empty for bit-exact tasks",
    "hardware": "device the numbers were measured on: the ceilings in effect (copy GB/s, bf16 matmul TFLOP/s), the "
                "best measured method of each (*_measured), every method measured (ceiling_methods), a raise by a "
                "verified observation above a measured ceiling (ceiling_note), and the datasheet peak",
    "environment": "Initial Environment: the device, libraries and ceilings, as text",
    "question": "Real Question: the task as posed to the engineer, with the reference code",
    "trajectory": "versions v0..vN: technique, rationale, code, config and measured metrics (ms, GB/s, % of copy "
                  "ceiling), and the Nsight Compute profile of that config (profile, ncu_*: DRAM, SM and tensor-pipe "
                  "% of peak, achieved occupancy, L2 hit rate, registers, local-memory instructions, top stalls)",
    "trajectory_text": "Real Trajectory: the versions as prose, every number from the observations",
    "answer": "Real Answer: the final kernel and its measured result",
    "answer_code": "source of the final kernel: the fastest verified version on a GPU; on the CPU interpreter "
                   "(no timings) the ladder's last verified version",
    "why": "why this case demonstrates the capability",
    "metrics": "headline numbers: latencies (ms) of eager, torch.compile, v0 and the best version; speedups; GB/s; "
               "the best version's ncu DRAM/SM/tensor-pipe % of peak and achieved occupancy",
    "verification": "what was verified: trials, shapes, comparison, seed; performance_verified is false without timings",
    "messages": "the case as a chat (system, user, assistant) for fine-tuning",
    "agent_messages": "the case as an agent trajectory: the assistant submits each version through a tool call, "
                      "a tool turn returns what kernelsynth measured for it (verification, latency, GB/s, TFLOP/s, "
                      "% of ceiling, registers, spills), and so on to the answer",
    "tools": "JSON schema of the tool agent_messages calls (for apply_chat_template(tools=...))",
    "provenance": "kernelsynth version, spec SHA-256, library versions, GPU, driver, date, run config",
}


def _fmt(x: Optional[float], spec: str = ".4f", unit: str = "") -> str:
    return "n/a" if x is None else f"{x:{spec}}{unit}"


def _ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a and b else None


def environment_text(hw: Hardware, draft: Optional[str] = None) -> str:
    """The hardware the record was made on, one paragraph; untimed: ``draft`` (:func:`draft_text`,
    default :data:`DRAFT`) first."""
    if hw.interpret:
        return (f"{draft or DRAFT} No GPU: CPU tensors, Triton kernels on Triton {hw.triton}'s interpreter (torch "
                f"{hw.torch}, Python {hw.python}).")
    l2 = f", {hw.l2_bytes / 2**20:.0f} MiB L2" if hw.l2_bytes else ""
    text = (f"GPU: {hw.device_name} ({hw.arch}, {hw.sm_count} SMs{l2}), driver {hw.driver}, CUDA {hw.cuda_runtime}, "
            f"torch {hw.torch}, Triton {hw.triton}. Measured ceilings: device-to-device copy "
            f"{_fmt(hw.copy_gbps, '.0f')} GB/s{_methods(hw, 'copy')} (datasheet {_fmt(hw.peak_gbps, '.0f')} GB/s), "
            f"bf16 matmul {_fmt(hw.matmul_tflops, '.0f')} TFLOP/s{_methods(hw, 'matmul')}.")
    note = ceiling_note(hw)
    if note:
        text += " " + note
    if hw.mismatch:
        text += f" Note: requested target hw={hw.target}, recorded on this device instead."
    return text


def _methods(hw: Hardware, kind: str) -> str:
    """' (best of torch_copy 4247, triton_stream 4133 GB/s)': the measured methods of a ceiling."""
    ms = [m for m in hw.ceiling_methods if m.get("ceiling") == kind and m.get("value") is not None]
    if len(ms) < 2:
        return ""
    return " (best of " + ", ".join(f"{m['method']} {m['value']:.0f}" for m in ms) + f" {ms[0]['unit']})"


def ceiling_note(hw: Hardware) -> Optional[str]:
    """The sentence a record carries when a verified observation raised a ceiling
    (kernelsynth/ceilings.py), None otherwise."""
    if not hw.ceiling_corrections:
        return None
    return " ".join(f"Ceiling raised by a measurement: {c['what']}; percentages of the {c['ceiling']} ceiling "
                    f"are of {c['raised_to']:.0f} {c['unit']}." for c in hw.ceiling_corrections)


def candidate_code(c) -> str:
    """The source a version is recorded with: what its backend records
    (:meth:`kernelsynth.backends.Backend.record_code`; raw CUDA kernels add their launch declaration)."""
    return backends.get(c.backend).record_code(c)


def _perf_text(o: Dict[str, Any]) -> str:
    """'X GB/s = Y% of the measured copy bandwidth' for memory-bound work, plus TFLOP/s when the
    task has FLOPs."""
    text = f"{o['achieved_gbps']:.0f} GB/s = {o['pct_of_copy_ceiling']:.1f}% of the measured copy bandwidth"
    if o.get("achieved_tflops"):
        text += f", {o['achieved_tflops']:.0f} TFLOP/s"
        if o.get("pct_of_matmul_ceiling"):
            text += f" = {o['pct_of_matmul_ceiling']:.0f}% of the measured bf16 matmul rate"
    return text


#: The sentence an untimed (interpreter) record carries in every text field when every version
#: ran on the Triton interpreter (:func:`draft_text` otherwise).
DRAFT = ("Correctness-only draft: verified on the Triton interpreter without timings; no latency, bandwidth "
         "or ceiling was measured.")


def draft_text(ran: Sequence[Tuple[str, str]] = ()) -> str:
    """The sentence an untimed record carries in every text field, naming what ran each version:
    ``ran`` is ``(version, what ran it)`` in trajectory order (a backend's ``cpu_run``:
    ``"eager PyTorch on the CPU"``, ``"TorchInductor's generated C++ code on the CPU"``).
    :data:`DRAFT` when every version ran on the Triton interpreter (or ``ran`` is empty)."""
    by_what: Dict[str, List[str]] = {}
    for version, what in ran:
        by_what.setdefault(what, []).append(version)
    if not by_what or list(by_what) == ["the Triton interpreter"]:
        return DRAFT
    parts = [f"{what} ({', '.join(vs)})" for what, vs in by_what.items()]
    where = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (f"Correctness-only draft: verified without timings on {where}; no latency, bandwidth or ceiling "
            "was measured.")

TOOLS = [{"type": "function", "function": {
    "name": TOOL_NAME,
    "description": ("Verify a kernel version against the reference on fresh random inputs (ragged shapes "
                    "included) and, on a GPU, time it; returns what was measured."),
    "parameters": {"type": "object", "required": ["version", "code"], "properties": {
        "version": {"type": "string", "description": "version label: v0, v1, ..."},
        "code": {"type": "string", "description": "the kernel source (a ModelNew module, or CUDA C++)"}}}}}]


#: A sentence of a rationale that cites an earlier measurement: a session, a card, a profiler's
#: reading, a latency, a rate or a share of a measured ceiling. Design arithmetic ("8x the
#: transactions", "60% of v0's traffic") does not match. Such text belongs in the spec's ``notes``.
EARLIER_MEASUREMENT = re.compile(
    r"\bsession \d+|\bin run \d+|(?-i:\b(?:[ABHL]\d{2,3}S?|GH200|GB200|RTX ?\d{4})\b)|\bncu\b|Nsight|"
    r"\d\s*(?:ms|msec|us|µs)\b|(?:milli|micro)seconds?|[GT]i?B/s|TFLOP/?S|\bmeasured\b|\breached \d|"
    r"benchmarked|\d\s*(?:%|percent)\s+of\s+(?:the\s+)?(?:peak|copy|matmul|torch copy_|memory bandwidth)|"
    r"\bof the (?:copy|matmul) ceiling\b|\d(?:\.\d+)?\s*x (?:faster|slower|eager|torch\.compile|v0)\b|"
    r"\d\s*%\s+(?:slower|faster)", re.I)

_warned: set = set()


def earlier_measurements(text: str) -> List[str]:
    """The sentences of ``text`` that cite an earlier measurement (:data:`EARLIER_MEASUREMENT`)."""
    return [x for x in re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.;])\s+", text.strip()) if EARLIER_MEASUREMENT.search(x)]


def split_expectation(rationale: str) -> tuple[str, Optional[str]]:
    """A spec rationale as (what the version does, the author's expectation or None): the
    expectation is the text from ``Expected:`` on. Records label it and follow it with the
    measured value, or leave it out when nothing was measured. Sentences of the first part that
    cite an earlier measurement (:func:`earlier_measurements`) are left out, with a warning once:
    a record says only what its own run measured (the spec's ``notes`` keep them)."""
    head, sep, tail = rationale.partition("Expected:")
    head = head.strip()
    for x in earlier_measurements(head):
        head = head.replace(x, "").strip()
        if x not in _warned:
            _warned.add(x)
            log.warning("a rationale sentence cites an earlier measurement and is left out of the records "
                        "(move it to the candidate's notes): %s", x[:200])
    return re.sub(r"\s{2,}", " ", head), (tail.strip() or None) if sep else None


def _measured(o: Dict[str, Any], v0_ms: Optional[float]) -> str:
    """'X ms, Y GB/s = Z% of the measured copy bandwidth, Nx v0' from one observation."""
    return f"{o['median_ms']:.4f} ms, {_perf_text(o)}, {_ratio(v0_ms, o['median_ms']):.2f}x v0"


def tool_result(o: Dict[str, Any], comparison: str, draft: str = DRAFT) -> Dict[str, Any]:
    """What the tool turn returns for one version: the observation's own numbers, nothing else
    (ms, GB/s, TFLOP/s, % of the measured ceilings, registers, spills); absent values left out."""
    out: Dict[str, Any] = {"version": o["version"], "config": json.loads(o["config"]), "verified": True,
                           "comparison": comparison, "trials": o["trials"], "max_rel_err": o["max_rel_err"]}
    for k in ("median_ms", "p20_ms", "p80_ms", "achieved_gbps", "pct_of_copy_ceiling", "achieved_tflops",
              "pct_of_matmul_ceiling", "n_regs", "n_spills") + PROFILE_FIELDS:
        if o.get(k) is not None:
            out[k] = o[k]
    if o["median_ms"] is None:
        out["timed"] = False
        out["note"] = draft
    return out


def _message(role: str, content: str, name: Optional[str] = None, call: Optional[Dict[str, str]] = None):
    return {"role": role, "content": content, "name": name, "tool_calls": None if call is None else
            [{"type": "function", "function": {"name": TOOL_NAME, "arguments": call}}]}


def _cpu_run(o: Dict[str, Any], c: Any) -> str:
    """What ran observation ``o``'s version on hw=cpu: its backend's ``cpu_run``; TorchInductor's
    generated code named by the code it generated (``facts["codegen"]``)."""
    facts = getattr(c, "facts", None)
    if o.get("role") == "inductor" and isinstance(facts, dict) and facts.get("codegen"):
        code = "Triton code on the Triton interpreter" if facts["codegen"] == "triton" else "C++ code on the CPU"
        return f"TorchInductor's generated {code}"
    return backends.get(c.backend).cpu_run


def build_record(spec: TaskSpec, hw: Hardware, traj: Dict[str, Any], obs_by_key: Dict[str, Dict[str, Any]],
                 run_config: Dict[str, Any], system_prompt: str,
                 generated: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Render one accepted trajectory as a record matching :data:`FEATURES`.

    Timed: the final version is the fastest verified one. Untimed (hw=cpu): the last version of
    the trajectory (the ladder's last, or TorchInductor's generated code after it), said so, and
    every text field says the record is a correctness-only draft naming what ran each version
    (:func:`draft_text`: :data:`DRAFT` for Triton kernels on the interpreter) and names no
    ceiling or speedup. ``generated``: the run's
    :class:`kernelsynth.inductor.GeneratedCandidate` objects by observation name; an ``inductor``
    version's technique and rationale are written from their counted facts and its observation's
    work model (kernelsynth/inductor.py), and ``why`` says the code was generated and by what."""
    dtype = traj["dtype"]
    chosen = [obs_by_key[k] for k in traj["observation_keys"]]
    baselines = {obs_by_key[k]["version"]: obs_by_key[k] for k in traj["baseline_keys"]}
    eager_ms = baselines.get("eager", {}).get("median_ms")
    compile_ms = baselines.get("compile", {}).get("median_ms")
    v0_ms = chosen[0]["median_ms"]
    timed = v0_ms is not None
    best = min(chosen, key=lambda o: o["median_ms"]) if timed else chosen[-1]
    cand_by_version = {c.version: c for c in spec.candidates}
    made = None  # the generated version of an inductor trajectory
    for o in chosen:
        if o["role"] == "inductor":
            g = (generated or {})[o["name"]]
            made = dataclasses.replace(g, facts=dict(g.facts, bytes=o.get("bytes")))
            cand_by_version[o["version"]] = made
    # what ran each version, said in every text field of an untimed record
    draft = draft_text([(o["version"], _cpu_run(o, cand_by_version[o["version"]])) for o in chosen]) if not timed else DRAFT
    versions, lines, leader = [], [], None  # leader: the fastest version so far
    for i, o in enumerate(chosen):
        c = cand_by_version[o["version"]]
        ms = o["median_ms"]
        if i == 0:
            verdict = "baseline"
        elif not timed:
            verdict = "verified"
        else:
            verdict = "improved" if ms < leader["median_ms"] else "no gain"
        what, expected = split_expectation(c.rationale)
        if timed:
            rationale = what + (f" Spec author's expectation (not a measurement): {expected} "
                                f"Measured: {_measured(o, v0_ms)}." if expected else "")
        else:
            rationale = what + " (" + draft + ")"
        versions.append({
            "version": c.version, "name": c.name, "technique": c.technique, "rationale": rationale,
            "code": candidate_code(c), "config": o["config"], "verdict": verdict, "median_ms": ms,
            "p20_ms": o["p20_ms"], "p80_ms": o["p80_ms"], "achieved_gbps": o["achieved_gbps"],
            "pct_of_copy_ceiling": o["pct_of_copy_ceiling"], "achieved_tflops": o.get("achieved_tflops"),
            "pct_of_matmul_ceiling": o.get("pct_of_matmul_ceiling"), "speedup_vs_v0": _ratio(v0_ms, ms),
            "speedup_vs_eager": _ratio(eager_ms, ms), "n_regs": o["n_regs"], "n_spills": o["n_spills"],
            "shared_bytes": o["shared_bytes"], "max_rel_err": o["max_rel_err"], "trials": o["trials"],
            **{k: o.get(k) for k in PROFILE_FIELDS},
        })
        line = f"{c.version} ({c.technique}). {rationale} "
        if timed:
            line += (f"Measured with config {o['config']}: {ms:.4f} ms median (p20 {o['p20_ms']:.4f}, p80 "
                     f"{o['p80_ms']:.4f}), {_perf_text(o)}, {_ratio(v0_ms, ms):.2f}x v0")
            if eager_ms:
                line += f", {_ratio(eager_ms, ms):.2f}x eager PyTorch"
            line += "."
            if o["n_regs"] is not None:
                line += f" Compiled to {o['n_regs']} registers/thread, {o['n_spills']} spills."
            if claim(o):
                line += " " + claim(o)
        else:
            line += f"Verified with config {o['config']} on {o['trials']} trials."
        if verdict == "no gain":
            line += f" No gain over {leader['version']} ({leader['median_ms']:.4f} ms), which stays ahead."
        lines.append(line)
        if timed and (leader is None or ms < leader["median_ms"]):
            leader = o
    ref_code = spec.reference.read_text()
    shape_txt = "x".join(str(v) for v in spec.timing_shape.values()) if spec.timing_shape else "n/a"
    question = spec.question.format(dtype=dtype, timing_shape=shape_txt).strip() + \
        f"\n\nReference (PyTorch):\n```python\n{ref_code.strip()}\n```"
    if not timed:
        question += f"\n\n({draft})"
    trials = min(o["trials"] for o in chosen)
    best_c = cand_by_version[best["version"]]
    if timed:
        answer = (f"Final kernel: {best['version']} ({best_c.technique}), the fastest verified version, config "
                  f"{best['config']}. At {shape_txt} {dtype} it runs in {best['median_ms']:.4f} ms, "
                  f"{_perf_text(best)}; {_ratio(v0_ms, best['median_ms']):.2f}x v0")
        if eager_ms:
            answer += f", {_ratio(eager_ms, best['median_ms']):.2f}x eager ({eager_ms:.4f} ms)"
        if compile_ms:
            answer += f", {_ratio(compile_ms, best['median_ms']):.2f}x torch.compile ({compile_ms:.4f} ms)"
        answer += f". Verified bit-for-bit on {trials} trials." if spec.comparison == "exact" else \
            f". Verified on {trials} trials, max relative error {best['max_rel_err']:.2e}."
        if best.get("profile") == "ncu":
            answer += " " + claim(best)
    else:
        order = ("chosen by ladder order (the last version of the ladder; every version verified)" if best["role"] !=
                 "inductor" else "chosen as the last version of the trajectory (TorchInductor's generated code follows "
                 "the ladder's versions; every version verified)")
        answer = (f"{draft} Final kernel: {best['version']} ({best_c.technique}), config {best['config']}, "
                  f"{order}, not by speed: nothing was timed. Verified on {trials} trials.")
    answer_code = candidate_code(best_c)
    if timed:
        why = spec.why.strip() + (f" Measured here: {_ratio(v0_ms, best['median_ms']):.2f}x over the first "
                                  f"version and {best['pct_of_copy_ceiling']:.1f}% of the copy ceiling.")
        if short_claim(best):
            why += f" Profiled ({best['version']}, one call): {short_claim(best)}."
    else:
        why = (f"{draft} The case shows {len(chosen)} versions of a kernel for {spec.name} ({dtype}) that "
               f"agree with the reference on {trials} trials over fresh random inputs, ragged shapes included; "
               "it shows correctness, not performance. Run it on a GPU to measure the versions.")
    if made is not None:
        why += (f" The final version's code was generated by TorchInductor (torch {made.facts.get('torch', '?')},"
                f" {made.facts.get('codegen', '?')} code) from the reference: "
                + made.rationale)
    trajectory_text = "\n\n".join(lines)
    if not timed:
        trajectory_text = draft + "\n\n" + trajectory_text
    fence = backends.get(best_c.backend).language
    user = environment_text(hw, draft) + "\n\n" + question
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user},
                {"role": "assistant", "content": trajectory_text + "\n\n" + answer + "\n\n```" + fence + "\n"
                 + answer_code.strip() + "\n```"}]
    agent = agent_messages(spec, chosen, cand_by_version, system_prompt, user, answer, answer_code, fence, timed, draft)
    return {
        "id": f"{spec.name}-{dtype}-{hw.target}-{traj['trajectory_id'][:12]}",
        "task": spec.name, "category": spec.category, "backend": best_c.backend,
        "dtype": dtype, "precision_policy": spec.precision.get(dtype, ""),
        "hardware": {"target": hw.target, "name": hw.device_name, "arch": hw.arch, "sm_count": hw.sm_count,
                     "l2_bytes": hw.l2_bytes, "driver": hw.driver, "interpret": hw.interpret,
                     "mismatch": hw.mismatch, "copy_gbps": hw.copy_gbps, "matmul_tflops": hw.matmul_tflops,
                     "peak_gbps": hw.peak_gbps, "peak_source": hw.peak_source,
                     "copy_gbps_measured": hw.copy_gbps_measured, "matmul_tflops_measured": hw.matmul_tflops_measured,
                     "ceiling_methods": [{k: m.get(k) for k in ("ceiling", "method", "value", "unit", "detail", "error")}
                                         for m in hw.ceiling_methods],
                     "ceiling_note": ceiling_note(hw)},
        "environment": environment_text(hw, draft), "question": question, "trajectory": versions,
        "trajectory_text": trajectory_text, "answer": answer, "answer_code": answer_code, "why": why,
        "metrics": {"eager_ms": eager_ms, "compile_ms": compile_ms, "v0_ms": v0_ms,
                    "best_ms": best["median_ms"], "best_version": best["version"],
                    "speedup_vs_v0": _ratio(v0_ms, best["median_ms"]),
                    "speedup_vs_eager": _ratio(eager_ms, best["median_ms"]),
                    "speedup_vs_compile": _ratio(compile_ms, best["median_ms"]),
                    "achieved_gbps": best["achieved_gbps"], "pct_of_copy_ceiling": best["pct_of_copy_ceiling"],
                    "achieved_tflops": best.get("achieved_tflops"),
                    "pct_of_matmul_ceiling": best.get("pct_of_matmul_ceiling"),
                    "n_regs": best["n_regs"], "n_spills": best["n_spills"], "max_rel_err": best["max_rel_err"],
                    "trials": trials, "ncu_dram_pct": best.get("ncu_dram_pct"), "ncu_sm_pct": best.get("ncu_sm_pct"),
                    "ncu_tensor_pct": best.get("ncu_tensor_pct"), "ncu_occupancy_pct": best.get("ncu_occupancy_pct")},
        "verification": {"passed": True, "performance_verified": bool(traj["performance_verified"]),
                         "comparison": spec.comparison, "trials": trials,
                         "shapes": ["x".join(str(v) for v in s.values()) for s in json.loads(best["verify_shapes"])],
                         "timing_shape": shape_txt if timed else None, "seed": int(run_config["exploration"]["seed"]),
                         "poisoned_outputs": True, "precision_policy": best.get("precision_policy"),
                         "precision_rms": best.get("precision_rms"),
                         "precision_honest_rms": best.get("precision_honest_rms"),
                         "precision_bound": best.get("precision_bound"),
                         **{k: best.get(k) for k in ("precision_tail", "precision_tail_bound", "precision_low",
                                                     "precision_low_bound", "precision_rel", "precision_rel_bound")}},
        "messages": messages,
        "agent_messages": agent,
        "tools": TOOLS,
        "provenance": {"kernelsynth_version": __version__, "spec_sha256": spec.sha256, "torch": hw.torch,
                       "triton": hw.triton, "cuda": hw.cuda_runtime, "driver": hw.driver, "gpu": hw.device_name,
                       "python": hw.python, "date": datetime.now(timezone.utc).date().isoformat(),
                       "hw_fingerprint": hw.fingerprint, "config": json.dumps(
                           {k: v for k, v in run_config.items() if k not in LOCAL_KEYS}, sort_keys=True)},
    }


def agent_messages(spec: TaskSpec, chosen, cand_by_version, system_prompt: str, user: str, answer: str,
                   answer_code: str, fence: str, timed: bool, draft: str = DRAFT):
    """The multi-turn form: for each version, an assistant turn that explains it and submits its code
    through a :data:`TOOL_NAME` call, then a tool turn with :func:`tool_result` of its observation;
    a last assistant turn gives the answer and the final code."""
    msgs = [_message("system", system_prompt),
            _message("user", user + f"\n\nSubmit each version with the {TOOL_NAME} tool; it returns what was measured.")]
    v0_ms = chosen[0]["median_ms"]
    prev = None
    for o in chosen:
        c = cand_by_version[o["version"]]
        what, expected = split_expectation(c.rationale)
        text = ""
        if prev is not None:
            text = (f"{prev['version']} measured {_measured(prev, v0_ms)}. " if timed else
                    f"{prev['version']} verified on {prev['trials']} trials ({draft}) ")
        text += f"{c.version}: {c.technique}. {what}"
        if expected and timed:
            text += f" Spec author's expectation (to be measured): {expected}"
        msgs.append(_message("assistant", text, call={"version": c.version, "code": candidate_code(c)}))
        msgs.append(_message("tool", json.dumps(tool_result(o, spec.comparison, draft), sort_keys=True), name=TOOL_NAME))
        prev = o
    last = (f"{prev['version']} measured {_measured(prev, v0_ms)}. " if timed else "")
    msgs.append(_message("assistant", last + answer + "\n\n```" + fence + "\n" + answer_code.strip() + "\n```"))
    return msgs
