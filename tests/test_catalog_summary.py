"""bench/catalog_summary.py on hand-made observation rows (the shape of a GPU run's) and on the
parquet files a run writes: best version, ratios, the bound, % of the ceiling, the targets."""

import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

_spec = importlib.util.spec_from_file_location("catalog_summary", Path(__file__).parents[1] / "bench" / "catalog_summary.py")
cs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cs)


def _row(task, version, ms, verdict="accepted", dtype="bfloat16", role="candidate", config=None,
         nbytes=4e9, flops=1e9, copy=4000.0, matmul=700.0):
    r = {"task": task, "dtype": dtype, "role": role, "version": version, "name": version + "_name",
         "config": json.dumps(config or {}), "verdict": verdict, "median_ms": ms, "bytes": nbytes, "flops": flops}
    if ms:
        r["achieved_gbps"] = nbytes / (ms * 1e-3) / 1e9
        r["pct_of_copy_ceiling"] = 100 * r["achieved_gbps"] / copy
        r["achieved_tflops"] = flops / (ms * 1e-3) / 1e12
        r["pct_of_matmul_ceiling"] = 100 * r["achieved_tflops"] / matmul
    return r


ROWS = [  # memory-bound: 4 GB at 4000 GB/s = 1 ms floor; compute-bound: 700 GFLOP at 700 TFLOP/s = 1 ms
    _row("mem", "v0", 4.0), _row("mem", "v1", 1.25, config={"BLOCK": 1024}), _row("mem", "v1", 1.5),
    _row("mem", "v2", 1.6), _row("mem", "v2", None, verdict="rejected"),
    _row("mem", "eager", 2.5, role="baseline"), _row("mem", "compile", 1.0, role="baseline"),
    _row("mm", "v0", 2.0, nbytes=1e8, flops=7e11), _row("mm", "v1", 1.0, nbytes=1e8, flops=7e11),
    _row("mm", "eager", 1.1, role="baseline", nbytes=1e8, flops=7e11),
    _row("mm", "compile", 1.2, role="baseline", nbytes=1e8, flops=7e11),
]


def test_summary_picks_the_best_config_and_reports_ratios_bound_and_ceiling_share():
    mem, mm = cs.summarise(ROWS)
    assert (mem["task"], mem["best"], mem["ms"], json.loads(mem["config"])) == ("mem", "v1", 1.25, {"BLOCK": 1024})
    assert mem["bound"] == "memory" and mem["x_v0"] == pytest.approx(3.2) and mem["x_eager"] == pytest.approx(2.0)
    assert mem["x_compile"] == pytest.approx(0.8) and mem["pct"] == pytest.approx(80.0)
    assert (mem["n_accepted"], mem["n_verified"]) == (6, 7)  # the rejected v2 config shows
    assert mm["bound"] == "compute" and mm["pct"] == pytest.approx(100.0) and mm["x_compile"] == pytest.approx(1.2)
    t = cs.targets([mem, mm])
    assert t["median_pct_of_copy_memory_bound"] == pytest.approx(80.0) and t["n_memory_bound"] == 1
    assert t["geomean_x_compile"] == pytest.approx((0.8 * 1.2) ** 0.5)
    assert t["below_0_9x_compile"] == ["mem/bfloat16"] and t["below_1_5x_v0"] == []
    assert t["not_all_correct"] == ["mem/bfloat16"]
    table = cs.markdown([mem, mm])
    assert "| mem | bfloat16 | memory | v1 v1_name | BLOCK=1024 | 1.2500 | 3.20 | 2.00 | 0.80 | 80.0% copy | no (6/7) |" in table
    assert "`mm` | v1 bfloat16: 2.00x v0, 1.20x torch.compile, 100% of the bf16 matmul ceiling" in cs.readme_lines([mem, mm])


def test_main_reads_a_finished_run_and_a_stopped_one(tmp_path, capsys):
    schema = pa.Table.from_pylist(ROWS).schema
    done, stopped = tmp_path / "runs" / "mem", tmp_path / "runs" / "mm"
    done.mkdir(parents=True)
    (stopped / "observations").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([r for r in ROWS if r["task"] == "mem"], schema=schema), done / "observations.parquet")
    for i, r in enumerate(r for r in ROWS if r["task"] == "mm"):  # one file per observation, as a run writes them
        pq.write_table(pa.Table.from_pylist([r], schema=schema), stopped / "observations" / f"k{i}.parquet")
    assert cs.main([str(tmp_path / "runs"), "--readme"]) == 0
    out = capsys.readouterr().out
    assert "| mem | bfloat16 |" in out and "| mm | bfloat16 | compute |" in out
    assert "geomean best / torch.compile: 0.980x (2 rows; target >= 1.2)" in out
    (tmp_path / "empty").mkdir()
    assert cs.main([str(tmp_path / "empty")]) == 1


def test_the_ladder_table_gives_every_version_its_step_and_its_first_rejection():
    rows = ROWS + [dict(_row("mem", "v2", None, verdict="rejected"), reason="stale answer: after one element\nmore")]
    table = {(t["task"], t["version"]): t for t in cs.ladder(rows)}
    v1, v2, eager = table[("mem", "v1")], table[("mem", "v2")], table[("mem", "eager")]
    assert v1["ms"] == 1.25 and v1["x_prev"] == pytest.approx(3.2) and v1["x_eager"] == pytest.approx(2.0)
    assert v2["ms"] == 1.6 and v2["x_prev"] == pytest.approx(1.25 / 1.6) and (v2["n_accepted"], v2["n"]) == (1, 3)
    assert v2["reason"] == "rejected" and table[("mem", "v0")]["x_prev"] is None and eager["x_prev"] is None
    assert [t["version"] for t in cs.ladder(rows) if t["task"] == "mm"] == ["v0", "v1", "eager", "compile"]
    md = cs.ladder_markdown(cs.ladder(rows[-1:]))
    assert "| mem | bfloat16 | v2 v2_name | - | - | - | - | - | 0/1 | stale answer: after one element |" in md
