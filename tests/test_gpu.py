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
    # the profile step (kernelsynth/profiling.py) profiled the one verified version, or says why not
    from kernelsynth import profiling

    if profiling.find_ncu() is None:
        assert honest["profile"].startswith("skipped: ncu (Nsight Compute) not found")
    elif not honest["profile"].startswith("skipped: ncu is not permitted"):
        assert honest["profile"] == "ncu", honest["profile"]
        assert 0 < honest["ncu_dram_pct"] <= 100 and 0 < honest["ncu_occupancy_pct"] <= 100
        assert honest["ncu_registers"] == honest["n_regs"] and honest["ncu_local_insts"] == 0
        assert honest["ncu_kernels"] >= 1 and honest["ncu_stalls"]
    assert all(o.get("profile") is None for o in res.observations if o["version"] != "v0")


def test_ceilings_are_the_best_of_several_methods_each_reported():
    from kernelsynth.workers import WorkerPool

    with WorkerPool(1) as pool:  # CUDA only in the worker
        res = pool.run("ceilings", {"copy_bytes": 1 << 30, "matmul_sizes": [4096, 8192]})
    assert res.ok, res.error
    got = res.value
    methods = {m["method"]: m for m in got["methods"]}
    assert set(methods) == {"torch_copy", "triton_stream", "cuda_copy16", "torch_mm_bf16_4096", "torch_mm_bf16_8192"}
    assert all(m["error"] is None and m["value"] > 0 for m in methods.values()), methods
    copies = [methods[k]["value"] for k in ("torch_copy", "triton_stream", "cuda_copy16")]
    assert got["copy_gbps"] == max(copies) and min(copies) > 0.8 * max(copies) and max(copies) > 1000
    assert got["matmul_tflops"] == max(methods["torch_mm_bf16_4096"]["value"], methods["torch_mm_bf16_8192"]["value"])
