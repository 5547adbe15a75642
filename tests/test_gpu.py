"""GPU-only checks (run on the lent H200 with KERNELSYNTH_TEST_GPU=1; skipped elsewhere)."""

import os

import pytest

from conftest import FIXTURES, compose
from kernelsynth import engine

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(os.environ.get("KERNELSYNTH_TEST_GPU") != "1",
                                                   reason="needs KERNELSYNTH_TEST_GPU=1 and a CUDA GPU")]


def test_illegal_memory_access_is_a_rejected_observation_and_the_run_completes(tmp_path):
    cfg = compose(["hw=auto", "exploration.progress=false", "exploration.trials=2",
                   f"task.spec={FIXTURES / 'faulty'}", f"cache_dir={tmp_path / 'cache'}"])
    res = engine.run(cfg, tmp_path)
    faults = {o["version"]: o["fault"] for o in res.observations}
    assert faults == {"v0": "ok", "v1": "exception", "v2": "compile_error", "v3": "cuda_error",
                      "v4": "wrong_output", "v5": "exception", "v6": "oom"}
    honest = next(o for o in res.observations if o["version"] == "v0")
    assert honest["median_ms"] > 0 and honest["n_regs"] > 0 and honest["n_spills"] == 0
    assert 0 < honest["pct_of_copy_ceiling"] < 110
    assert not res.hardware.interpret and res.hardware.copy_gbps > 1000


def test_side_stream_work_cannot_show_a_speedup(tmp_path):
    """Work moved to a private stream either stays inside the timed region (do_bench's cache
    clearing and the next launch overlap with it, so it costs what it costs) or is rejected
    by the timing-integrity rules; it never looks faster than the honest kernel."""
    cfg = compose(["hw=auto", "exploration.progress=false", "exploration.trials=2",
                   f"task.spec={FIXTURES / 'gpu_cheats'}", f"cache_dir={tmp_path / 'cache'}"])
    obs = {o["version"]: o for o in engine.run(cfg, tmp_path).observations}
    assert obs["h1"]["verdict"] == "accepted" and obs["h1"]["synced_ms"] < 1.5 * obs["h1"]["median_ms"] + 0.2
    c1 = obs["c1"]
    assert c1["fault"] == "timing_integrity" or c1["median_ms"] >= 0.9 * obs["h1"]["median_ms"], c1
