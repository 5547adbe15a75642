"""Hardware resolution: auto detection, mismatch errors and the allow_mismatch label."""

import json

import pytest

from kernelsynth import hardware
from kernelsynth.errors import HardwareMismatchError

H200 = {"cuda": True, "name": "NVIDIA H200", "arch": "sm_90", "sm_count": 132, "l2_bytes": 62914560,
        "total_mem_bytes": 150109880320, "driver": "580.159.04", "torch": "2.11", "triton": "3.6",
        "cuda_runtime": "13.0", "python": "3.12"}
NO_GPU = {"cuda": False, "name": "x86_64", "torch": "2.13", "triton": "3.9", "python": "3.11"}


def hw_cfg(name, **kw):
    return {**hardware.known_targets().get(name, {"name": name}), **kw}


def test_auto_detects_the_gpu_and_falls_back_to_cpu():
    hw = hardware.resolve({"name": "auto"}, H200)
    assert (hw.target, hw.interpret, hw.peak_gbps, hw.mismatch) == ("h200", False, 4800.0, False)
    cpu = hardware.resolve({"name": "auto"}, NO_GPU)
    assert cpu.target == "cpu" and cpu.interpret and cpu.device == "cpu"


def test_named_target_on_another_gpu_is_an_error():
    with pytest.raises(HardwareMismatchError, match="H200.*allow_mismatch"):
        hardware.resolve(hw_cfg("a100"), H200)


def test_named_gpu_without_a_gpu_is_an_error():
    with pytest.raises(HardwareMismatchError, match="hw=cpu"):
        hardware.resolve(hw_cfg("h100"), NO_GPU)


def test_allow_mismatch_records_on_the_actual_device_labelled():
    hw = hardware.resolve(hw_cfg("a100", allow_mismatch=True), H200)
    assert hw.mismatch and hw.device_name == "NVIDIA H200" and hw.target == "a100"


def test_fingerprint_changes_with_the_driver():
    a = hardware.resolve({"name": "auto"}, H200)
    b = hardware.resolve({"name": "auto"}, {**H200, "driver": "999"})
    assert a.fingerprint != b.fingerprint


def test_ceilings_are_measured_once_per_fingerprint(tmp_path):
    hw = hardware.resolve({"name": "auto"}, H200)
    calls = []

    def measure():
        calls.append(1)
        return {"copy_gbps": 4000.0, "matmul_tflops": 700.0}

    hardware.load_or_measure_ceilings(hw, tmp_path, measure)
    hw2 = hardware.resolve({"name": "auto"}, H200)
    hardware.load_or_measure_ceilings(hw2, tmp_path, measure)
    assert calls == [1] and hw2.copy_gbps == 4000.0 and hw2.matmul_tflops == 700.0
    assert hw.fingerprint in json.loads((tmp_path / "ceilings.json").read_text())


def test_concurrent_ceiling_measurements_keep_every_entry_and_measure_once(tmp_path):
    """Two runs on the same device measure once; runs on different devices keep both entries."""
    import threading
    import time

    calls = []

    def slow_measure():
        calls.append(1)
        time.sleep(0.3)
        return {"copy_gbps": 4000.0, "matmul_tflops": 700.0}

    targets = [hardware.resolve({"name": "auto"}, H200) for _ in range(3)] + \
              [hardware.resolve({"name": "auto"}, {**H200, "driver": "other"})]
    threads = [threading.Thread(target=hardware.load_or_measure_ceilings, args=(hw, tmp_path, slow_measure))
               for hw in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 2 and all(hw.copy_gbps == 4000.0 for hw in targets)
    assert len(json.loads((tmp_path / "ceilings.json").read_text())) == 2


def test_a_gpu_of_the_right_name_but_another_sku_is_not_the_target():
    """hw yaml's arch and sm_count are read: an H100 PCIe (114 SMs) is not the SXM target whose
    peaks conf/hw/h100.yaml holds."""
    pcie = {**H200, "name": "NVIDIA H100 PCIe", "sm_count": 114}
    with pytest.raises(HardwareMismatchError, match="sm_count 114, not 132"):
        hardware.resolve(hw_cfg("h100"), pcie)
    assert hardware.resolve(hw_cfg("h100", allow_mismatch=True), pcie).mismatch
    auto = hardware.resolve({"name": "auto"}, pcie)
    assert auto.target == "unknown" and auto.peak_gbps is None
    assert hardware.resolve(hw_cfg("h200"), H200).mismatch is False  # the datasheet agrees with the probe
    assert hardware.sku_difference({"arch": "sm_90", "sm_count": None}, {"arch": "sm_80", "sm_count": 108}) \
        == "arch sm_80, not sm_90"


def test_the_probe_worker_skips_the_harness_imports_until_another_job_comes(tmp_path):
    """kernelsynth/hwprobe.py: the engine's probe worker (PROBE_ONLY_ENV) runs the hardware probe
    without importing kernelsynth.jobs (and, on a GPU, its torch._dynamo: about 1.5 CPU s of every
    run), and imports kernelsynth.jobs when another job comes. Seen from the spec's reference, which the probe imports:
    this one raises with the names of the two modules already loaded. (Any other worker imports
    them at its start, so that a spare started ahead is ready: not run here, a worker start more.)"""
    from kernelsynth.hwprobe import interpreter_facts
    from kernelsynth.sandbox import Sandbox, SandboxSettings
    from kernelsynth.workers import PROBE_ONLY_ENV, WorkerPool

    ref = tmp_path / "reference.py"
    ref.write_text("import sys\nraise RuntimeError('loaded: ' + ','.join(\n"
                   "    m for m in ('kernelsynth.jobs', 'torch._dynamo') if m in sys.modules))\n")
    box = Sandbox(SandboxSettings(mode="off"))

    def loaded(pool):
        res = pool.run("probe", {"reference": str(ref)})
        assert res.ok and res.value["interpret"] and res.value["cuda"] is False, res.error
        return res.value["reference_error"].split("loaded: ", 1)[1]

    with WorkerPool(1, env={PROBE_ONLY_ENV: "1", "TRITON_INTERPRET": "1"}, sandbox=box, timeout_s=120) as pool:
        assert loaded(pool) == ""
        # an interpreter run takes these facts in the parent instead (no probe worker: engine.run); they are
        # the worker's, field for field, so the hardware fingerprint, and with it every observation key, is unchanged
        seen = pool.run("probe", {"reference": None}).value
        assert interpreter_facts() == seen and seen["triton"] == __import__("triton").__version__
        assert pool.run("health", {}).ok  # a job of kernelsynth.jobs, on the same worker
        # on the interpreter path kernelsynth.jobs no longer imports torch._dynamo (verify/dynamo_deferral.py)
        assert loaded(pool) == "kernelsynth.jobs"


def test_interpreter_facts_without_triton_package_metadata(monkeypatch):
    """A triton installed without metadata under that name (vendored, or as ``pytorch-triton``): the
    parent's facts read the version from the module instead of failing the run."""
    import importlib.metadata

    import triton

    from kernelsynth.hwprobe import interpreter_facts

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    facts = interpreter_facts()
    assert facts["triton"] == str(triton.__version__) and facts["interpret"] is True
