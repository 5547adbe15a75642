"""Issue 14 items 2, 3, 5: the ncu profile step (parsing, the command flow, its skip paths), ceilings
that are ceilings (best of methods, raised by a verified observation), and the charts. No GPU:
ncu's output is the fixture tests/fixtures/ncu/raw_page.csv, written from ncu's documented
raw-page CSV format, and tests/fixtures/ncu/fake_ncu.py stands in for the CLI."""

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import FLIP2D
from kernelsynth import ceilings, charts, profiling
from kernelsynth.contract import ProfileRequest, ProfileResult, profile_columns
from kernelsynth.hardware import CEILINGS_PROTOCOL, Hardware, ceiling_lines, load_or_measure_ceilings
from kernelsynth.spec import load_spec
from kernelsynth.store import OBSERVATION_SCHEMA, ObservationStore

NCU = Path(__file__).parent / "fixtures" / "ncu"


def _h200(**kw) -> Hardware:
    methods = [{"ceiling": "copy", "method": "torch_copy", "value": 4247.0, "unit": "GB/s", "detail": "", "error": None},
               {"ceiling": "copy", "method": "triton_stream", "value": 4133.0, "unit": "GB/s", "detail": "", "error": None},
               {"ceiling": "copy", "method": "cuda_copy16", "value": None, "unit": "GB/s", "detail": "",
                "error": "CudaCompileError: no NVRTC"},
               {"ceiling": "matmul", "method": "torch_mm_bf16_8192", "value": 680.0, "unit": "TFLOP/s", "detail": "",
                "error": None}]
    base = dict(target="h200", device_name="NVIDIA H200", interpret=False, arch="sm_90", sm_count=132,
                peak_gbps=4800.0, peak_tflops={"bfloat16": 989.0}, copy_gbps=4247.0, matmul_tflops=680.0,
                copy_gbps_measured=4247.0, matmul_tflops_measured=680.0, ceiling_methods=methods)
    return Hardware(**(base | kw))


def _row(key, version, ms, role="candidate", verdict="accepted", dtype="float32", config='{"BLOCK_N": 1024}',
         nbytes=4 * 2**30, flops=None, spec="S"):
    row = {name: None for name in OBSERVATION_SCHEMA.names}
    row.update(key=key, task="flip2d", spec_sha256=spec, role=role, version=version, name=f"n{version}",
               hw_fingerprint=_h200().fingerprint,  # measured on _h200: only such rows raise its ceilings
               backend="triton", config=config, dtype=dtype, verdict=verdict, median_ms=ms, bytes=nbytes,
               flops=flops, interpret=False, fault="ok", reason="", trials=5)
    return row


# ------------------------------------------------------------------------------ ncu output parsing
def test_raw_page_csv_parses_every_kernel_with_units_and_numbers():
    kernels = profiling.parse_raw_csv((NCU / "raw_page.csv").read_text())
    assert [k["id"] for k in kernels] == [0, 1]
    assert kernels[1]["kernel"] == "_flip_packed_kernel"
    m = kernels[1]["metrics"]
    assert m["gpu__time_duration.sum"] == 1045216.0  # thousands separators dropped
    assert m["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == 91.83
    assert m["sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"] is None  # n/a
    assert kernels[1]["units"]["gpu__time_duration.sum"] == "nsecond"
    with pytest.raises(ValueError, match="no ncu raw-page CSV header"):
        profiling.parse_raw_csv("==PROF== Disconnected\n")


def test_summary_is_of_the_longest_kernel_and_names_the_top_stalls():
    s = profiling.summarise(profiling.parse_raw_csv((NCU / "raw_page.csv").read_text()))
    assert s["profile"] == "ncu" and s["ncu_kernel"] == "_flip_packed_kernel" and s["ncu_kernels"] == 2
    assert s["ncu_duration_ms"] == pytest.approx((3104 + 1045216) * 1e-6)
    assert (s["ncu_dram_pct"], s["ncu_sm_pct"], s["ncu_occupancy_pct"], s["ncu_l2_hit_pct"]) == (91.83, 38.65, 84.96, 3.27)
    assert s["ncu_tensor_pct"] == 0.0 and s["ncu_registers"] == 40 and s["ncu_local_insts"] == 0
    assert s["ncu_stalls"] == "long_scoreboard 18.77, lg_throttle 2.41, wait 1.06"
    assert json.loads(s["ncu_metrics"])["lts__t_sector_hit_rate.pct"] == 3.27
    assert set(s) | {"profile_s"} == set(profile_columns())  # every column of the observation is filled
    with pytest.raises(ValueError, match="no kernel"):
        profiling.summarise([])


def test_the_claim_a_record_cites():
    o = dict(profiling.summarise(profiling.parse_raw_csv((NCU / "raw_page.csv").read_text())))
    text = profiling.claim(o)
    assert text.startswith("ncu (one call of this config, 2 kernel(s); numbers of _flip_packed_kernel): "
                           "DRAM 91.8% of peak, SM 38.6%, tensor pipe 0.0%, achieved occupancy 85.0%, L2 hit 3.3%, "
                           "40 registers/thread, 0 local-memory (spill) instructions")
    assert text.endswith("top stalls (cycles per issued instruction): long_scoreboard 18.77, lg_throttle 2.41, wait 1.06.")
    assert profiling.claim({"profile": "skipped: ncu missing"}) == "Profile: skipped: ncu missing."
    assert profiling.claim({"profile": None}) is None


# ------------------------------------------------------------------------------ the ncu command flow
def _fake(tmp_path, monkeypatch, mode):
    log = tmp_path / "ncu.log"
    monkeypatch.setenv("FAKE_NCU_MODE", mode)
    monkeypatch.setenv("FAKE_NCU_LOG", str(log))
    work = tmp_path / "work"
    work.mkdir()
    return log, str(work)


def test_run_ncu_profiles_the_driver_between_profiler_start_and_stop(tmp_path, monkeypatch):
    log, work = _fake(tmp_path, monkeypatch, "ok")
    out = profiling.run_ncu(str(tmp_path / "req.pkl"), str(NCU / "fake_ncu.py"), list(profiling.METRICS), 60, work)
    assert out["profile"] == "ncu" and out["ncu_dram_pct"] == 91.83
    profile_call, import_call = [json.loads(x) for x in log.read_text().splitlines()]
    assert profile_call[:6] == ["--profile-from-start", "off", "--clock-control", "none", "--target-processes", "all"]
    assert profile_call[-5:] == [sys.executable, "-s", "-m", "kernelsynth.profile_driver", str(tmp_path / "req.pkl")]
    assert set(profile_call[profile_call.index("--metrics") + 1].split(",")) == set(profiling.METRICS)
    assert import_call[:2] == ["--import", os.path.join(work, "profile.ncu-rep")]
    assert import_call[2:] == ["--csv", "--page", "raw", "--print-units", "base"]


def test_a_metric_ncu_does_not_know_is_dropped_and_the_profile_retried(tmp_path, monkeypatch):
    log, work = _fake(tmp_path, monkeypatch, "unknown")
    out = profiling.run_ncu(str(tmp_path / "req.pkl"), str(NCU / "fake_ncu.py"), list(profiling.METRICS), 60, work)
    assert out["profile"] == "ncu"
    gmma = "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
    assert json.loads(out["ncu_metrics"])["_not_collected"] == [gmma]
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(calls) == 3 and gmma not in calls[1][calls[1].index("--metrics") + 1]


def test_counters_not_permitted_is_a_recorded_reason(tmp_path, monkeypatch):
    _, work = _fake(tmp_path, monkeypatch, "perm")
    out = profiling.run_ncu(str(tmp_path / "req.pkl"), str(NCU / "fake_ncu.py"), list(profiling.METRICS), 60, work)
    assert out == {"profile": "skipped: ncu is not permitted to read the GPU's performance counters "
                              "(ERR_NVGPUCTRPERM): profiling needs root or the driver's "
                              "NVreg_RestrictProfilingToAdminUsers=0"}


def test_a_profiled_program_printing_the_refusal_words_does_not_skip_a_profile_ncu_wrote(tmp_path, monkeypatch):
    """Red team s35 C: a spec version printed ncu's ERR_NVGPUCTRPERM line from inside the profiled
    driver and turned its whole batch (and every later dtype) into "skipped: not permitted". A report
    ncu wrote is read first; plain program text is never a refusal."""
    _, work = _fake(tmp_path, monkeypatch, "forged")
    out = profiling.run_ncu(str(tmp_path / "req.pkl"), str(NCU / "fake_ncu.py"), list(profiling.METRICS), 60, work)
    assert out["profile"] == "ncu" and out["ncu_dram_pct"] == 91.83
    assert profiling.refusal("ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU") is None
    assert profiling.refusal("==ERROR== ERR_NVGPUCTRPERM - The user does not have").startswith("ncu is not permitted")


def test_a_report_the_profiled_program_planted_is_not_read(tmp_path, monkeypatch):
    """Red team s35 C2 (real ncu on an H100): a program that copied a genuine report to the report
    path and launched nothing got that report read as its profile (ncu left the file alone and
    exited 0). A report left from before is removed first, and "No kernels were profiled" fails."""
    log, work = _fake(tmp_path, monkeypatch, "planted")
    stale = os.path.join(work, "profile.ncu-rep")
    Path(stale).write_bytes(b"an earlier report")
    out = profiling.run_ncu(str(tmp_path / "req.pkl"), str(NCU / "fake_ncu.py"), list(profiling.METRICS), 60, work)
    assert out == {"profile": "failed: ncu profiled no kernel (No kernels were profiled)"}
    assert len(log.read_text().splitlines()) == 1  # no --import of the planted file


def test_the_profile_job_without_ncu_records_why(tmp_path):
    from kernelsynth import jobs
    from kernelsynth.stages.exploration import Exploration

    request = Exploration(trials=1).plan(load_spec(FLIP2D / "spec.yaml"), Hardware("cpu", "cpu", True),
                                         cache_dir=tmp_path)[0].request
    out = jobs.profile(ProfileRequest(request, list(profiling.METRICS), ncu=str(tmp_path / "no-ncu")))
    assert out["profile"] == f"skipped: ncu (Nsight Compute) not found ({tmp_path / 'no-ncu'})"
    assert out["profile_s"] >= 0 and set(out) <= set(profile_columns())


# ------------------------------------------------------------------------------ the step in exploration
def _store_with(tmp_path, rows):
    store = ObservationStore(tmp_path / "run")
    for r in rows:
        store.append(r)
    return store


@pytest.mark.parametrize("interpret,profile,reason", [
    (True, True, "skipped: no GPU: the Triton interpreter runs no hardware counters"),
    (False, False, "skipped: exploration.profile=false")])
def test_the_fastest_config_of_each_version_gets_the_skip_reason(tmp_path, interpret, profile, reason):
    from kernelsynth.stages.exploration import Exploration

    rows = [_row("a", "v0", 2.0), _row("b", "v0", 1.5, config='{"BLOCK_N": 2048}'), _row("c", "v1", 1.0),
            _row("d", "v1", 0.5, verdict="rejected"), _row("e", "compile", 0.9, role="baseline"),
            _row("f", "ext", 0.4, role="external"), _row("g", "v0", 3.0, dtype="bfloat16")]
    store = _store_with(tmp_path, rows)
    hw = _h200(interpret=interpret)
    spec = type("S", (), {"sha256": "S"})()  # the step reads only the spec's hash
    got = Exploration(profile=profile)._profile(spec, hw, store, store.read(), [], {}, None)
    profiled = {r["key"]: r["profile"] for r in got}
    assert profiled == {"a": None, "b": reason, "c": reason, "d": None, "e": None, "f": None, "g": reason}
    # nothing was attempted: the observation files are left as they were (a resumed run rewrites none)
    assert {r["key"]: r["profile"] for r in store.read()} == dict.fromkeys(profiled)


def test_profile_targets_and_cache():
    rows = [_row("a", "v0", 2.0), _row("b", "v0", 1.5), _row("c", "v1", None), _row("x", "v1", 1.0, spec="other")]
    assert [o["key"] for o in profiling.profile_targets(rows, "S")] == ["b", "c"]
    assert not profiling.needs_profile({"profile": "ncu"}) and not profiling.needs_profile({"profile": "failed: x"})
    assert profiling.needs_profile({"profile": None}) and profiling.needs_profile({})


# ------------------------------------------------------------------------------ ceilings
def test_a_verified_baseline_above_the_copy_ceiling_raises_it_and_says_which():
    hw = _h200()
    rows = [_row("v2", "v2", 4 * 2**30 / 4150e6), _row("comp", "compile", 4 * 2**30 / 4299e9 * 1e3,
                                                       role="baseline"),
            _row("ext", "x", 0.5, role="external"), _row("bad", "v1", 0.6, verdict="rejected")]
    for r in rows:
        ceilings.derive(r, hw)
    assert rows[1]["pct_of_copy_ceiling"] > 101  # against the best measured method
    fixes = ceilings.correct(hw, rows, "S")
    assert hw.copy_gbps == pytest.approx(rows[1]["achieved_gbps"]) and hw.copy_gbps_measured == 4247.0
    assert [c["observation"] for c in fixes] == ["comp"] and fixes[0]["ceiling"] == "copy"
    assert "torch.compile, float32" in fixes[0]["what"] and "above the best measured method (4247 GB/s)" in fixes[0]["what"]
    assert rows[1]["pct_of_copy_ceiling"] == pytest.approx(100.0)
    assert rows[0]["pct_of_copy_ceiling"] == pytest.approx(100 * rows[0]["achieved_gbps"] / hw.copy_gbps)
    assert hw.matmul_tflops == 680.0 and hw.ceiling_corrections == fixes
    assert ceiling_lines(hw)[0].startswith("ceiling: copy 4299 GB/s (raised from the measured 4247); measured")
    assert "(raised from the measured 4247); measured: best of torch_copy 4247, triton_stream 4133, cuda_copy16 " \
           "failed (CudaCompileError: no NVRTC)" in ceiling_lines(hw)[0]
    again = ceilings.correct(hw, rows, "S")  # idempotent: from the measured ceiling, not the raised one
    assert again == fixes and rows[1]["pct_of_copy_ceiling"] == pytest.approx(100.0)


def test_an_observation_of_another_device_raises_no_ceiling():
    """Red team s35 D: a merge groups runs by (task, target); an observation measured on another
    fingerprint (a faster GPU under the same target) raised this device's copy ceiling."""
    hw = _h200()
    fast = dict(_row("other", "v2", 4 * 2**30 / 6000e6), hw_fingerprint="another-device")
    mine = dict(_row("mine", "v2", 4 * 2**30 / 4300e6), hw_fingerprint=hw.fingerprint)
    fixes = ceilings.correct(hw, [fast, mine], "S")
    assert [c["observation"] for c in fixes] == ["mine"] and hw.copy_gbps == pytest.approx(mine["achieved_gbps"])
    assert ceilings.correct(hw, [fast], "S") == [] and hw.copy_gbps == 4247.0
    unknown = dict(fast, hw_fingerprint=None)  # red team s35 D2: a row without a fingerprint raised it too
    assert ceilings.correct(hw, [unknown], "S") == [] and hw.copy_gbps == 4247.0
    assert ceilings.same_hardware([fast, mine, unknown], hw.fingerprint) == ([mine], 2)


def test_within_one_percent_external_and_rejected_observations_raise_nothing():
    hw = _h200()
    near = 4 * 2**30 / (4247e9 * 1.009) * 1e3  # 0.9% above
    rows = [_row("a", "v2", near), _row("ext", "x", 0.1, role="external"), _row("bad", "v1", 0.1, verdict="rejected"),
            _row("o", "v1", 0.1, spec="other")]
    assert ceilings.correct(hw, rows, "S") == [] and hw.copy_gbps == 4247.0
    assert rows[0]["pct_of_copy_ceiling"] == pytest.approx(100.9)


def test_the_matmul_ceiling_is_raised_the_same_way():
    hw = _h200()
    flops = 2 * 8192 ** 3
    rows = [_row("mm", "v3", flops / 700e12 * 1e3, nbytes=3 * 2 * 8192 ** 2, flops=flops)]
    fixes = ceilings.correct(hw, rows, "S")
    assert [c["ceiling"] for c in fixes] == ["matmul"] and hw.matmul_tflops == pytest.approx(700.0)
    assert rows[0]["pct_of_matmul_ceiling"] == pytest.approx(100.0) and hw.copy_gbps == 4247.0


def test_ceilings_of_an_earlier_protocol_are_measured_again_with_every_method(tmp_path):
    hw = _h200(copy_gbps=None, matmul_tflops=None)
    (tmp_path / "ceilings.json").write_text(json.dumps({hw.fingerprint: {"copy_gbps": 4000.0, "matmul_tflops": 600.0}}))
    methods = [{"ceiling": "copy", "method": "torch_copy", "value": 4250.0, "unit": "GB/s"}]
    load_or_measure_ceilings(hw, tmp_path, lambda: {"copy_gbps": 4250.0, "matmul_tflops": 690.0, "methods": methods})
    entry = json.loads((tmp_path / "ceilings.json").read_text())[hw.fingerprint]
    assert entry["protocol"] == CEILINGS_PROTOCOL and entry["methods"] == methods
    assert (hw.copy_gbps, hw.copy_gbps_measured, hw.matmul_tflops, hw.ceiling_methods) == (4250.0, 4250.0, 690.0, methods)


# ------------------------------------------------------------------------------ charts
def _traj(rows, dtype="float32"):
    return [{"dtype": dtype, "observation_keys": [r["key"] for r in rows if r["role"] == "candidate"],
             "baseline_keys": [r["key"] for r in rows if r["role"] == "baseline"]}]


def test_charts_are_drawn_from_the_measured_points(tmp_path):
    hw = _h200()
    rows = [_row("a", "v0", 2.2), _row("b", "v1", 1.1), _row("e", "eager", 2.4, role="baseline"),
            _row("c", "compile", 1.05, role="baseline")]
    for r in rows:
        ceilings.derive(r, hw)
    got = charts.draw(tmp_path / "charts", "flip2d", hw, _traj(rows), rows)
    assert [(c["kind"], c["path"], c["reason"]) for c in got] == [
        ("roofline", "charts/flip2d-float32-h200-roofline.png", None),
        ("ladder", "charts/flip2d-float32-h200-ladder.png", None)]
    for c in got:
        data = (tmp_path / c["path"]).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    flops = [_row("m", "v0", 1.0, nbytes=1e9, flops=5e14), _row("n", "v1", 0.5, nbytes=1e9, flops=5e14)]
    for r in flops:
        ceilings.derive(r, hw)
    assert all(c["path"] for c in charts.draw(tmp_path / "charts", "conv", hw, _traj(flops), flops))
    assert [p["key"] for p in charts.series([rows[1], None, rows[0]], [rows[3], rows[2]])] == ["b", "a", "e", "c"]


def test_untimed_charts_and_a_missing_matplotlib_are_skipped_with_a_reason(tmp_path, monkeypatch):
    rows = [_row("a", "v0", None), _row("b", "v1", None)]
    got = charts.draw(tmp_path / "charts", "flip2d", Hardware("cpu", "cpu", True), _traj(rows), rows)
    assert [(c["path"], c["reason"]) for c in got] == [(None, charts.UNTIMED)] * 2
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    # untimed: the reason is that, and matplotlib is not imported (an interpreter run's parent skips it)
    got = charts.draw(tmp_path / "charts", "flip2d", Hardware("cpu", "cpu", True), _traj(rows), rows)
    assert [(c["path"], c["reason"]) for c in got] == [(None, charts.UNTIMED)] * 2
    got = charts.draw(tmp_path / "charts", "flip2d", _h200(), _traj([_row("a", "v0", 1.0)]), [_row("a", "v0", 1.0)])
    assert all(c["path"] is None and c["reason"].startswith("matplotlib is not available (ModuleNotFoundError") for c in got)
    assert not (tmp_path / "charts").exists()


def test_profile_result_fields_are_observation_columns():
    assert set(profile_columns()) <= set(OBSERVATION_SCHEMA.names)
    assert ProfileResult().profile is None


# ------------------------------------------------------------------------------ records cite them
def test_records_cite_the_profile_and_the_raised_ceiling():
    from kernelsynth.records import FEATURES, build_record

    spec = load_spec(FLIP2D / "spec.yaml")
    hw = _h200()
    prof = profiling.summarise(profiling.parse_raw_csv((NCU / "raw_page.csv").read_text()))
    rows = [_row(f"k{i}", c.version, ms, spec=spec.sha256) for i, (c, ms) in enumerate(zip(spec.candidates, (2.0, 1.1, 1.0)))]
    rows += [_row("eager", "eager", 2.2, role="baseline", spec=spec.sha256),
             _row("comp", "compile", 4 * 2**30 / 4299e9 * 1e3, role="baseline", spec=spec.sha256)]
    for r in rows:
        r.update(p20_ms=r["median_ms"], p80_ms=r["median_ms"], n_regs=40, n_spills=0, shared_bytes=0, max_rel_err=0.0,
                 verify_shapes=json.dumps([{"M": 3, "N": 5}]))
    rows[2].update(prof)
    rows[0]["profile"] = "skipped: ncu (Nsight Compute) not found (PATH)"
    ceilings.correct(hw, rows, spec.sha256)
    traj = {"dtype": "float32", "trajectory_id": "t" * 24, "observation_keys": ["k0", "k1", "k2"],
            "baseline_keys": ["eager", "comp"], "performance_verified": True}
    rec = build_record(spec, hw, traj, {r["key"]: r for r in rows}, {"exploration": {"seed": 0}}, "sys")
    FEATURES.encode_example(rec)  # the record matches the declared schema
    v2 = rec["trajectory"][2]
    assert v2["profile"] == "ncu" and v2["ncu_dram_pct"] == 91.83 and v2["ncu_stalls"].startswith("long_scoreboard")
    assert "ncu (one call of this config, 2 kernel(s); numbers of _flip_packed_kernel): DRAM 91.8% of peak" \
        in rec["trajectory_text"]
    assert "Profile: skipped: ncu (Nsight Compute) not found (PATH)." in rec["trajectory_text"]
    assert "DRAM 91.8% of peak" in rec["answer"] and rec["metrics"]["ncu_dram_pct"] == 91.83
    assert rec["why"].endswith("Profiled (v2, one call): ncu: DRAM 91.8% of peak, 0 local-memory (spill) instructions.")
    assert rec["hardware"]["copy_gbps"] == pytest.approx(4299.0) and rec["hardware"]["copy_gbps_measured"] == 4247.0
    assert rec["hardware"]["ceiling_note"].startswith("Ceiling raised by a measurement: the copy ceiling is 4299 GB/s")
    assert "(best of torch_copy 4247, triton_stream 4133 GB/s)" in rec["environment"]
    assert "torch.compile, float32" in rec["environment"]
    assert rec["metrics"]["speedup_vs_compile"] == pytest.approx(rows[4]["median_ms"] / 1.0)
    assert [m["method"] for m in rec["hardware"]["ceiling_methods"]][:3] == ["torch_copy", "triton_stream", "cuda_copy16"]


def test_a_driver_that_fails_is_a_failed_profile_with_its_last_words(tmp_path):
    ncu = tmp_path / "ncu"
    ncu.write_text("#!/bin/sh\necho 'Traceback (most recent call last):'\necho 'RuntimeError: no CUDA GPUs are available' >&2\n"
                   "echo '==ERROR== The application returned an error code (1).'\nexit 1\n")
    ncu.chmod(0o755)
    out = profiling.run_ncu(str(tmp_path / "req.pkl"), str(ncu), list(profiling.CORE_METRICS), 60, str(tmp_path))
    assert out == {"profile": "failed: ncu exited 1: The application returned an error code (1).; "
                              "RuntimeError: no CUDA GPUs are available"}
    assert profiling.refusal("==ERROR== Failed to initialize the profiler: LibraryNotLoaded") == (
        "ncu could not initialise its profiler on this machine (Failed to initialize the profiler: LibraryNotLoaded)")


def test_the_driver_builds_the_candidate_and_calls_it_once_more_to_be_profiled(tmp_path, monkeypatch):
    """The real driver (kernelsynth/profile_driver.py) under the stand-in ncu, on the interpreter:
    it builds flip2d's v1 from the job's request and calls it at the timing shape."""
    import dataclasses

    from kernelsynth.stages.exploration import Exploration

    job = next(j for j in Exploration(trials=1).plan(load_spec(FLIP2D / "spec.yaml"), Hardware("cpu", "cpu", True),
                                                     cache_dir=tmp_path) if j.row["version"] == "v1")
    request = dataclasses.replace(job.request, timing_shape={"M": 5, "N": 7})
    _, work = _fake(tmp_path, monkeypatch, "run")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("FAKE_NCU_APP_OUT", str(tmp_path / "app.txt"))
    path = profiling.request_file(work, ProfileRequest(request, list(profiling.METRICS), warmup_calls=2))
    out = profiling.run_ncu(path, str(NCU / "fake_ncu.py"), list(profiling.METRICS), 120, work)
    app = (tmp_path / "app.txt").read_text()
    assert out["profile"] == "ncu", app
    assert (f"kernelsynth.profile_driver: v1 float32 {job.request.candidate.config}: 2 warm-up call(s), "
            "1 profiled call, output (5, 7)") in app
    # a batch: the same driver builds and calls each candidate in turn, in one ncu run
    other = dataclasses.replace(request, timing_shape={"M": 3, "N": 4})
    path = profiling.request_file(work, ProfileRequest(request, list(profiling.METRICS), warmup_calls=1, batch=[other]))
    monkeypatch.setenv("FAKE_NCU_CSV", str(_batch_csv(tmp_path / "b.csv", 2)))
    outs = profiling.run_ncu_batch(path, str(NCU / "fake_ncu.py"), list(profiling.METRICS), 120, work, 2)
    app = (tmp_path / "app.txt").read_text()
    assert [o["profile"] for o in outs] == ["ncu", "ncu"], app
    assert [x.split(": ")[-1] for x in app.splitlines() if x.startswith("kernelsynth.profile_driver")] == [
        "1 warm-up call(s), 1 profiled call, output (5, 7)", "1 warm-up call(s), 1 profiled call, output (3, 4)"]


def test_the_cuda_copy_ceiling_kernel_compiles_to_16_byte_streaming_accesses(tmp_path):
    """What NVRTC compiles on the GPU (kernelsynth/timing.py CUDA_COPY16), compiled here with nvcc
    for sm_90: self-contained (no include), and every access a 16-byte ld/st.global.cs."""
    import shutil
    import subprocess

    from kernelsynth.timing import CUDA_COPY16

    nvcc = shutil.which("nvcc")
    assert nvcc, "CI compiles every CUDA source with nvcc (tests/test_tasks.py); it needs nvcc"
    (tmp_path / "copy.cu").write_text(CUDA_COPY16)
    out = subprocess.run([nvcc, "-arch=sm_90", "-ptx", "-o", "-", str(tmp_path / "copy.cu")], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    loads = [x for x in out.stdout.splitlines() if "ld.global" in x]
    stores = [x for x in out.stdout.splitlines() if "st.global" in x]
    assert len(loads) == len(stores) == 4
    assert all("ld.global.cs.v4.s32" in x for x in loads) and all("st.global.cs.v4.s32" in x for x in stores)


def _batch_csv(path: Path, calls: int, marker_first: bool = True) -> Path:
    """raw_page.csv's two kernels once per call, each call's range led by the driver's marker."""
    lines = (NCU / "raw_page.csv").read_text().splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith('"ID"'))
    rows = lines[head + 2:]
    marker = rows[0].replace("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
                             "(int, T2, T3)", profiling.MARKER)
    body, n = [], 0
    for c in range(calls):
        for r in ([marker] if marker_first or c else []) + rows:
            body.append(f'"{n}"' + r[r.index(","):])
            n += 1
    path.write_text("\n".join(lines[:head + 2] + body) + "\n")
    return path


def test_a_batch_report_is_split_at_the_markers_and_a_shifted_one_is_refused(tmp_path):
    kernels = profiling.parse_raw_csv(_batch_csv(tmp_path / "b.csv", 3).read_text())
    calls = profiling.split_calls(kernels, 3)
    assert [[k["kernel"] for k in c] for c in calls] == [[kernels[1]["kernel"], "_flip_packed_kernel"]] * 3
    assert [profiling.summarise(c)["ncu_dram_pct"] for c in calls] == [91.83] * 3
    assert profiling.split_calls(kernels, 1) == [kernels]  # one call: no markers looked for
    with pytest.raises(ValueError, match="3 marker kernel\\(s\\) for 4 profiled calls"):
        profiling.split_calls(kernels, 4)  # e.g. a call that launched a kernel of the marker's name
    shifted = profiling.parse_raw_csv(_batch_csv(tmp_path / "s.csv", 3, marker_first=False).read_text())
    with pytest.raises(ValueError, match="2 marker kernel\\(s\\) for 3 profiled calls, and kernels before"):
        profiling.split_calls(shifted, 3)


@pytest.mark.parametrize("mode,budget", [("ok", 600.0), ("perm", 600.0), ("ok", 0.0), ("forged", 600.0)])
def test_the_step_runs_ncu_in_a_worker_for_each_target_and_records_what_it_found(tmp_path, mode, budget):
    """On a GPU target (here with the stand-in ncu, in a real worker and its sandbox): each
    version's fastest config gets the ncu columns, from one ncu run for the dtype (a batch split
    at the markers); a refusal is recorded once and for the rest; past the budget the rest are
    skipped with that reason."""
    from kernelsynth.sandbox import Sandbox
    from kernelsynth.stages.exploration import Exploration

    spec = load_spec(FLIP2D / "spec.yaml")
    hw = _h200()
    stage = Exploration(ncu=str(NCU / "fake_ncu.py"), profile_budget_s=budget)
    planned = [j for j in stage.plan(spec, hw, cache_dir=tmp_path / "cache") if j.row["dtype"] == "float32"
               and j.row["role"] == "candidate"]
    jobs = [j for v in ("v0", "v1", "v2") for j in [x for x in planned if x.row["version"] == v][:2]]
    rows = [dict(_row(j.key, j.row["version"], 1.0 + i / 10, config=j.row["config"], spec=spec.sha256))
            for i, j in enumerate(jobs)]
    store = _store_with(tmp_path, rows)
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    env = {"FAKE_NCU_MODE": mode, "TRITON_CACHE_DIR": str(tmp_path / "triton"),
           "FAKE_NCU_CSV": str(_batch_csv(csv_dir / "batch.csv", 3))}
    got = stage._profile(spec, hw, store, store.read(), jobs, env,
                         Sandbox(readable=[str(NCU), str(csv_dir)], gpu=False))
    targets = {o["key"] for o in profiling.profile_targets(rows, spec.sha256)}
    assert len(targets) == 3 and len(rows) == 6
    status = {r["key"]: r["profile"] for r in got}
    assert all(status[k] is None for k in status if k not in targets)
    expected = {"ok": "ncu", "forged": "ncu", "perm": "skipped: ncu is not permitted to read the GPU's performance counters "
                "(ERR_NVGPUCTRPERM): profiling needs root or the driver's NVreg_RestrictProfilingToAdminUsers=0"}[mode]
    if budget == 0:
        expected = "skipped: the profile budget (exploration.profile_budget_s=0) was spent"
    assert {status[k] for k in targets} == {expected}
    on_disk = {r["key"]: r for r in store.read()}
    for k in targets:
        assert on_disk[k]["profile"] == expected
        assert on_disk[k]["ncu_dram_pct"] == (91.83 if expected == "ncu" else None)
        assert (on_disk[k]["profile_s"] is not None) == (budget > 0)
    if budget > 0:  # one run for the three: its time shared among them
        assert len({on_disk[k]["profile_s"] for k in targets}) == 1


def test_a_refusal_in_one_dtype_is_not_carried_to_the_next(tmp_path):
    """Red team s35 C: a refusal was copied to every later target of the run, so one version that
    made its dtype's ncu run fail with ncu's refusal words blanked the profiles of every dtype. Each
    dtype's ncu run now finds its own (a real refusal costs one short ncu run per dtype)."""
    from kernelsynth.sandbox import Sandbox
    from kernelsynth.stages.exploration import Exploration

    spec = load_spec(FLIP2D / "spec.yaml")
    stage = Exploration(ncu=str(NCU / "fake_ncu.py"), profile_budget_s=600.0)
    planned = [j for j in stage.plan(spec, _h200(), cache_dir=tmp_path / "cache") if j.row["role"] == "candidate"]
    jobs = [next(x for x in planned if x.row["version"] == v and x.row["dtype"] == d)
            for d in ("float32", "bfloat16") for v in ("v0", "v1")]
    rows = [dict(_row(j.key, j.row["version"], 1.0 + i / 10, config=j.row["config"], spec=spec.sha256),
                 dtype=j.row["dtype"]) for i, j in enumerate(jobs)]
    store = _store_with(tmp_path, rows)
    log = tmp_path / "ncu_calls.log"
    env = {"FAKE_NCU_MODE": "forged-fail", "TRITON_CACHE_DIR": str(tmp_path / "triton"), "FAKE_NCU_LOG": str(log)}
    got = stage._profile(spec, _h200(), store, store.read(), jobs, env,
                         Sandbox(settings={"mode": "off"}, gpu=False))  # off: the stand-in ncu writes its log
    assert {r["dtype"] for r in got if r["profile"]} == {"float32", "bfloat16"}
    assert all(r["profile"].startswith("skipped: ncu is not permitted") for r in got if r["profile"])
    assert len(log.read_text().splitlines()) == 2  # one ncu run per dtype, none copied


def test_the_card_embeds_the_charts_of_every_trajectory(tmp_path):
    from kernelsynth.stages.synthesis import Part, write_dataset

    spec = load_spec(FLIP2D / "spec.yaml")
    hw = _h200()
    rows = [_row("a", "v0", 2.0, spec=spec.sha256), _row("b", "v1", 1.0, spec=spec.sha256),
            _row("c", "compile", 0.99, role="baseline", spec=spec.sha256)]
    ceilings.correct(hw, rows, spec.sha256)
    traj = dict(_traj(rows)[0], trajectory_id="t" * 24, task="flip2d", accepted=False, reasons=["v2: no observation"])
    part = Part(spec, hw, "h200", "data/flip2d/h200-00000-of-00001.parquet", [], [traj], rows)
    write_dataset(tmp_path / "dataset", [part])
    card = (tmp_path / "dataset" / "README.md").read_text()
    assert "![flip2d float32 roofline](charts/flip2d-float32-h200-roofline.png)" in card
    assert "![flip2d float32 ladder](charts/flip2d-float32-h200-ladder.png)" in card
    assert sorted(p.name for p in (tmp_path / "dataset" / "charts").iterdir()) == [
        "flip2d-float32-h200-ladder.png", "flip2d-float32-h200-roofline.png"]
    assert [c["path"] for c in part.charts] == ["charts/flip2d-float32-h200-roofline.png",
                                                "charts/flip2d-float32-h200-ladder.png"]
