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
