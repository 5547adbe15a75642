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
import re
from pathlib import Path

import pytest
from types import SimpleNamespace

from kernelsynth.engine import summary_rows
from kernelsynth.records import EARLIER_MEASUREMENT, earlier_measurements, split_expectation
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
        for text in (c.rationale.partition("Expected:")[0], c.technique):
            assert earlier_measurements(text) == [], (c.version, earlier_measurements(text))


def test_a_rationale_sentence_citing_an_earlier_measurement_is_left_out_with_a_warning(caplog):
    rationale = ("On the H200, torch.compile's flip runs at about 101% of torch copy_ in float32. v4 keeps int32 "
                 "offsets and loads 8x fewer words. v1 (26% of the copy ceiling, session 9) reads x once; ncu on v3 "
                 "shows DRAM 87% busy. Expected: near the copy ceiling.")
    with caplog.at_level(logging.WARNING, logger="kernelsynth.records"):
        what, expected = split_expectation(rationale)
    assert what == "v4 keeps int32 offsets and loads 8x fewer words."
    assert expected == "near the copy ceiling."
    assert "left out of the records" in caplog.text
    # red team s35b A2: phrasings the first pattern missed
    for claim in ("It took 2.3 milliseconds.", "0.41 msec per call.", "About 410 us.", "On Hopper it ran 1.4x faster "
                  "than eager.", "It moved 90 percent of peak bandwidth.", "3 TB/s on a GH200.", "An RTX 4090 ran it.",
                  "Nsight Compute showed 92% DRAM.", "In run 12 it won.", "12% slower than torch.compile."):
        assert earlier_measurements(claim) == [claim], claim
    # ... and design text it dropped (A4): "reached" as a word, "e.g." inside a sentence
    for keep in ("Each tile loops until the row end is reached.", "It reads x once (e.g. the L2 holds it) and writes "
                 "y once.", "One ld.global.v4.b32 per 16 bytes."):
        assert split_expectation(keep) == (keep, None), keep
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


#: Red team s35 E's mutant of flip2d v5, made from v5's own source: on the whole-chunk path (MODE 1,
#: NW % V == 0 and tiles not dividing the tensor) rows 32 and up are stored to row % 32.
V5_STORE = """    if MODE == 0:
        tl.store(Y + base + c, t)
    else:"""
V5_ROWS_MOD_32 = """    if MODE == 0:
        tl.store(Y + base + c, t)
    elif MODE == 1:
        tl.store(Y + (rows % 32) * NW + c, t, mask=(c < NW) & (rows < M))
    else:"""


def test_v5_storing_rows_modulo_32_on_its_whole_chunk_path_fails_the_cpu_plan(monkeypatch, tmp_path):
    """Red team s35 E: the fault shows only with more than 32 rows on MODE 1; the interpreter's
    37 x 8 shape (added for it) runs that path past the first row tile, and fails it there."""
    from test_redteam_s8_holes import _evaluate

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    source = (SPECS / "flip2d" / "kernels" / "v5_mirrored_vectors.py").read_text()
    assert source.count(V5_STORE) == 1
    mutant = tmp_path / "v5_rows_mod32.py"
    mutant.write_text(source.replace(V5_STORE, V5_ROWS_MOD_32))
    spec = SPECS / "flip2d" / "spec.yaml"
    assert load_spec(spec).interpret_shapes[-1] == {"M": 37, "N": 8}
    assert _evaluate(spec, [mutant], shapes=6)["v5_rows_mod32"][0] == "accepted"  # the plan before
    verdict, reason, _ = _evaluate(spec, [mutant], shapes=7)["v5_rows_mod32"]
    assert verdict == "rejected" and "shape 37x8" in reason and "not bit-exact" in reason, reason


def test_a_merge_keeps_one_fingerprint_per_target(tmp_path):
    """Red team s35 D1: two jobs of one target on different drivers (two fingerprints) merged into
    one record taking v0 from one device and v5 from the other (4.81x v0, 106% of the copy
    ceiling). The merge now builds each target's records from the first job's fingerprint only."""
    import json
    import shutil
    import subprocess
    import sys
    from dataclasses import fields

    import pyarrow.parquet as pq

    from kernelsynth.ceilings import derive
    from kernelsynth.hardware import Hardware
    from kernelsynth.merge import merge
    from kernelsynth.store import tagged_table

    src = tmp_path / "src"
    subprocess.run([sys.executable, "-m", "kernelsynth", "task=flip2d", "hw=cpu", "task.dtypes=[float32]",
                    "task.tunables.BLOCK_N=128", "exploration.trials=1", f"hydra.run.dir={src}"],
                   check=True, capture_output=True, cwd=tmp_path)
    names = {f.name for f in fields(Hardware)}
    times = [("0", "560.35", {"v0": 6.5, "v1": 4.0, "v2": 3.2, "v3": 3.0, "v4": 2.95, "v5": 2.9}),
             ("1", "570.10", {"v0": 7.0, "v1": 3.6, "v2": 3.0, "v3": 2.6, "v4": 2.5, "v5": 1.35})]
    prints = []
    for name, driver, ms in times:  # two timed H100 jobs, one driver each (the helper's /tmp/mkD.py)
        d = tmp_path / "sweep" / name
        shutil.copytree(src, d)
        shutil.rmtree(d / "dataset")
        (d / "observations.parquet").unlink()
        info = json.loads((d / "run.json").read_text())
        h = dict(info["hardware"], target="h100", device_name="NVIDIA H100 80GB HBM3", interpret=False, arch="sm_90",
                 sm_count=132, driver=driver, copy_gbps=3000.0, copy_gbps_measured=3000.0, matmul_tflops=700.0,
                 matmul_tflops_measured=700.0, peak_gbps=3350.0)
        hw = Hardware(**{k: v for k, v in h.items() if k in names})
        prints.append(hw.fingerprint)
        info["hardware"] = dict(h, fingerprint=hw.fingerprint)
        (d / "run.json").write_text(json.dumps(info))
        key = bytes.fromhex((d / ".observation-key").read_text().strip())
        for f in (d / "observations").glob("*.parquet"):
            rows = pq.read_table(f).to_pylist()
            f.unlink()
            for r in rows:
                t = ms.get(r["version"])
                if t is None:
                    continue
                r.update(interpret=False, hw_fingerprint=hw.fingerprint, median_ms=t, p20_ms=t, p80_ms=t,
                         timing_spread=0.001, bytes=2 * 32768 * 16384 * 4, key=r["key"][:-4] + name * 4,
                         timing_shape=json.dumps({"M": 32768, "N": 16384}), n_regs=20, n_spills=0, shared_bytes=0)
                derive(r, hw)
                pq.write_table(tagged_table(key, f"{r['key']}.parquet", [r]), d / "observations" / f"{r['key']}.parquet")
    result = merge([tmp_path / "sweep"])
    assert prints[0] != prints[1]
    assert result.foreign == {("flip2d", "h100"): 6}, result.foreign  # job 1's six timed versions
    merged = pq.read_table(result.dataset_dir.parent / "observations.parquet").to_pylist()
    assert merged and {r["hw_fingerprint"] for r in merged} == {prints[0]}


def test_names_and_reasons_with_rich_markup_print_as_text():
    """Red team s35 B1: an external candidate raising RuntimeError('[/oops] boom') or a jsonl id
    '[/bold]' made the summary raise rich's MarkupError (the run exited 1, a sweep skipped its merge)."""
    import io

    from rich.console import Console

    from kernelsynth.engine import print_summary

    obs = [_obs("v0", "candidate", 4.0), _obs("v1", "candidate", 2.0), _obs("eager", "baseline", 3.0),
           _obs("compile", "baseline", 1.0), _obs("x/[/bold]", "external", None, "rejected", "crashed: [/oops] boom")]
    result = _result(obs)
    result.spec.name = "flip2d"
    result.hardware = SimpleNamespace(device_name="cpu", copy_gbps=None, interpret=True)
    result.n_records, result.wall_s = 0, 1.0
    result.trajectories = [{"dtype": "float32", "accepted": False, "reasons": ["v1: [/red] no gain"]}]
    out = io.StringIO()
    print_summary(result, Console(file=out, width=200))
    text = out.getvalue()
    assert "x/[/bold]" in text and "[/oops] boom" in text and "v1: [/red] no gain" in text


#: A performance claim in kernel source, which records embed verbatim (red team s35b A1: flip2d
#: v4's docstring said "about 101 % of the measured torch copy_ on the H200"). Hardware facts
#: (an H200's 227 KiB of shared memory per block) and compile notes are not claims of speed.
CODE_CLAIM = re.compile(r"\bncu\b|\d\s*%\s+(?:slower|faster)|\d(?:\.\d+)?x faster|of the measured|"
                        r"[Mm]easured on (?:an? |the )?[AH]\d00|GB/s|TFLOP/s")


@pytest.mark.parametrize("spec", sorted(p.parent.name for p in SPECS.glob("*/spec.yaml")))
def test_no_kernel_source_claims_a_speed(spec):
    loaded = load_spec(SPECS / spec / "spec.yaml")
    for c in loaded.candidates:
        hits = [line.strip() for line in c.file.read_text().splitlines() if CODE_CLAIM.search(line)]
        assert hits == [], (c.version, hits)
    # the reference's source is the record's question: no earlier measurement there either (s35b A3)
    ref = [x for x in loaded.reference.read_text().splitlines() if EARLIER_MEASUREMENT.search(x)]
    assert ref == [], ref


def test_two_external_candidates_of_one_name_get_their_own_names(tmp_path):
    """Red team s35b B2: a/v0.py (correct) and b/v0.py (wrong) showed as one row "v0 1/2 external",
    which hid the rejection and which file passed."""
    from kernelsynth.external import load_external

    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "v0.py").write_text("# a candidate\n")
    rows = tmp_path / "corpus.jsonl"
    rows.write_text('{"id": "k", "code": "# one"}\n{"id": "k", "code": "# two"}\n')
    got = load_external([str(tmp_path / "a" / "v0.py"), str(tmp_path / "b" / "v0.py"), str(rows)], tmp_path / "run")
    assert [c.name for c in got] == ["v0", "v0#2", "corpus/k", "corpus/k#2"]
    assert got[1].file == tmp_path / "b" / "v0.py"


def test_the_progress_bar_prints_a_label_as_text():
    """Red team s35b B1: a job label naming a candidate file like ``x/[/bold]`` crashed rich's
    progress column (markup) during exploration on a terminal."""
    import io

    from rich.console import Console

    from kernelsynth.stages.exploration import Exploration

    out = io.StringIO()
    with Exploration().progress_bar(Console(file=out, width=120, force_terminal=True)) as bar:
        task = bar.add_task("", total=1)
        bar.update(task, description="x/[/bold] float32 {}", advance=1)
    assert "x/[/bold] float32" in out.getvalue()
