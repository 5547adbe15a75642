"""Red team s35's findings, each with its failing input (BENCHMARKS.md / issue 14's closing note).

B: an external candidate named like a ladder version or a baseline (``v0.py``, ``eager.py``,
``compile.py``) was keyed by version only in the console summary: it replaced the ladder's v0 row
(every "x v0" ratio became the external's), and an accepted external ``eager`` was overwritten by the
empty baseline group, whose rejected-row branch then crashed on an empty reason (IndexError).

A: spec rationales carried earlier measurements ("On the H200, torch.compile's flip runs at about
101% of torch copy_", "v1 (26% of the copy ceiling in bfloat16, session 9)", "ncu on v4 shows ...")
into every record, CPU drafts included, as if this run had observed them. They now live in each
candidate's ``notes`` (never in records), and any such sentence left in a rationale is dropped.
"""
import logging
from pathlib import Path

import pytest
from types import SimpleNamespace

from kernelsynth.engine import summary_rows
from kernelsynth.records import earlier_measurements, split_expectation
from kernelsynth.spec import SpecError, load_spec

SPECS = Path(__file__).resolve().parents[1] / "specs"


def _obs(version, role, ms, verdict="accepted", reason=""):
    return {"dtype": "float32", "spec_sha256": "S", "version": version, "role": role, "median_ms": ms,
            "verdict": verdict, "reason": reason, "config": "{}", "name": version, "achieved_gbps": None,
            "pct_of_copy_ceiling": None}


def _result(obs):
    spec = SimpleNamespace(dtypes=["float32"], sha256="S", baselines=["eager", "compile"],
                           candidates=[SimpleNamespace(version="v0"), SimpleNamespace(version="v1")])
    return SimpleNamespace(spec=spec, observations=obs, trajectories=[])


def test_an_external_named_like_a_version_or_baseline_keeps_its_own_row():
    obs = [_obs("v0", "candidate", 4.0), _obs("v1", "candidate", 2.0), _obs("eager", "baseline", 3.0),
           _obs("compile", "baseline", 1.0),
           _obs("v0", "external", 100.0), _obs("compile", "external", 0.5), _obs("v1", "external", None, "rejected", "")]
    rows = {(r["version"], r["trajectory"]): r for r in summary_rows(_result(obs))}
    ladder_v1 = next(r for r in summary_rows(_result(obs)) if r["version"] == "v1" and r["trajectory"] != "external"
                     and not r["trajectory"].startswith("rejected:"))
    assert ladder_v1["median_ms"] == 2.0
    assert ladder_v1["vs_v0"] == 2.0          # the ladder's v0 (4.0 ms), not the external v0.py (100 ms)
    assert ladder_v1["vs_compile"] == 0.5     # torch.compile's 1.0 ms, not the external compile.py's 0.5 ms
    assert rows[("v0", "external")]["median_ms"] == 100.0
    assert rows[("v1", "rejected: no reason recorded")]["median_ms"] is None


def test_an_accepted_external_named_eager_on_the_cpu_does_not_crash_the_summary():
    # on the CPU the baselines are not timed: the baseline group "eager" is empty
    obs = [_obs("v0", "candidate", None), _obs("v1", "candidate", None), _obs("eager", "external", None)]
    rows = summary_rows(_result(obs))
    ext = [r for r in rows if r["version"] == "eager"]
    assert len(ext) == 1 and ext[0]["trajectory"] == "external" and ext[0]["configs_ok"] == "1/1"


def test_an_accepted_external_that_calls_the_reference_says_so_in_the_summary():
    """Red team s35 G: it read "1/1 external", the same as an honest kernel."""
    obs = [_obs("v0", "candidate", None), _obs("v1", "candidate", None),
           dict(_obs("calls_reference", "external", None), reference_ops_used="flip", library_calls="flip")]
    row = next(r for r in summary_rows(_result(obs)) if r["version"] == "calls_reference")
    assert row["trajectory"] == "external, calls flip: not a kernel"


@pytest.mark.parametrize("spec", sorted(p.parent.name for p in SPECS.glob("*/spec.yaml")))
def test_no_spec_rationale_cites_an_earlier_measurement(spec):
    for c in load_spec(SPECS / spec / "spec.yaml").candidates:
        head = c.rationale.partition("Expected:")[0]
        assert earlier_measurements(head) == [], (c.version, earlier_measurements(head))


def test_a_rationale_sentence_citing_an_earlier_measurement_is_left_out_with_a_warning(caplog):
    rationale = ("On the H200, torch.compile's flip runs at about 101% of torch copy_ in float32. v4 keeps int32 "
                 "offsets and loads 8x fewer words. v1 (26% of the copy ceiling, session 9) reads x once; ncu on v3 "
                 "shows DRAM 87% busy. Expected: near the copy ceiling.")
    with caplog.at_level(logging.WARNING, logger="kernelsynth.records"):
        what, expected = split_expectation(rationale)
    assert what == "v4 keeps int32 offsets and loads 8x fewer words."
    assert expected == "near the copy ceiling."
    assert "left out of the records" in caplog.text
    # design arithmetic stays: "8x the transactions", "60% of v0's traffic"
    keep = "Every element is its own sector: 8x the transactions of a coalesced read, 60% of v0's traffic."
    assert split_expectation(keep) == (keep, None)


def test_notes_must_be_a_string(tmp_path):
    import shutil

    import yaml

    shutil.copytree(SPECS / "flip2d", tmp_path / "flip2d")
    path = tmp_path / "flip2d" / "spec.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["candidates"][1]["notes"] = ["a list"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(SpecError, match="notes"):
        load_spec(path)


def test_v5_storing_rows_modulo_32_on_its_whole_chunk_path_fails_the_cpu_plan(monkeypatch):
    """Red team s35 E: the fault shows only with more than 32 rows on MODE 1; the interpreter's
    37 x 8 shape (added for it) runs that path past the first row tile, and fails it there."""
    from test_redteam_s8_holes import _evaluate

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    mutant = Path(__file__).parent / "adversarial" / "redteam_s35" / "flip" / "v5_rows_mod32.py"
    spec = SPECS / "flip2d" / "spec.yaml"
    assert load_spec(spec).interpret_shapes[-1] == {"M": 37, "N": 8}
    assert _evaluate(spec, [mutant], shapes=6)["v5_rows_mod32"][0] == "accepted"  # the plan before
    verdict, reason, _ = _evaluate(spec, [mutant], shapes=7)["v5_rows_mod32"]
    assert verdict == "rejected" and "shape 37x8" in reason and "not bit-exact" in reason, reason
