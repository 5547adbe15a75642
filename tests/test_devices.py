"""One worker per GPU (kernelsynth/devices.py, WorkerPool slots): planning from a faked probe,
the CUDA_VISIBLE_DEVICES each worker really gets, the per-device columns of a run, and a device
whose workers keep failing costing its jobs, not the run. No GPU: the devices are faked, the
workers are real (CPU, Triton interpreter)."""

import json

import pytest

from kernelsynth.devices import Device, device_fingerprint, plan_slots, visible_value
from kernelsynth.errors import UserError
from kernelsynth.sandbox import Sandbox, SandboxSettings
from kernelsynth.workers import DevicesFailed, Fault, WorkerPool

H200 = {"name": "NVIDIA H200", "arch": "sm_90", "sm_count": 132, "total_mem_bytes": 150 << 30}
TWO = [dict(H200, index=0, uuid="GPU-aaaa", pci_bus_id="0000:19:00"),
       dict(H200, index=1, uuid="GPU-bbbb", pci_bus_id="0000:3b:00")]


def test_auto_is_one_pinned_worker_per_gpu_and_the_current_behaviour_without_gpus():
    slots = plan_slots("auto", TWO, "fp")
    assert [(s.index, s.visible, s.env()) for s in slots] == [
        (0, "0", {"CUDA_VISIBLE_DEVICES": "0", "KERNELSYNTH_GPU_UUID": "GPU-aaaa"}),
        (1, "1", {"CUDA_VISIBLE_DEVICES": "1", "KERNELSYNTH_GPU_UUID": "GPU-bbbb"})]
    assert slots[0].fingerprint == device_fingerprint("fp", TWO[0]) != slots[1].fingerprint
    assert plan_slots(None, TWO, "fp") == slots
    # hw=cpu: the probe reports no devices, so auto and null are one unpinned worker, a number N such workers
    assert plan_slots("auto", [], "fp") == [None] and plan_slots(None, [], "fp") == [None]
    assert plan_slots(3, [], "fp") == [None, None, None] and plan_slots("2", [], "fp") == [None, None]
    with pytest.raises(UserError, match="names GPUs"):
        plan_slots([0], [], "fp")


def test_a_number_spreads_over_the_gpus_and_a_list_picks_them():
    assert [s.index for s in plan_slots(3, TWO, "fp")] == [0, 1, 0]
    assert [s.index for s in plan_slots(2, TWO[:1], "fp")] == [0, 0]  # one GPU: all on it, as before
    assert [(s.index, s.visible) for s in plan_slots([1], TWO, "fp")] == [(1, "1")]
    # the parent's own CUDA_VISIBLE_DEVICES: index i is its i-th entry (UUIDs pass through)
    assert [s.visible for s in plan_slots("auto", TWO, "fp", parent_visible="3, GPU-bbbb")] == ["3", "GPU-bbbb"]
    assert visible_value(0, None) == "0" and visible_value(1, "") == "1"
    for bad, what in ((0, "at least 1"), ([2], "not visible"), ([0, 0], "distinct"), ("many", "auto, a number"),
                      (True, "auto, a number")):
        with pytest.raises(UserError, match=what):
            plan_slots(bad, TWO, "fp")


def test_gpus_of_another_model_are_left_out_of_auto_and_refused_in_a_list():
    mixed = [TWO[0], dict(TWO[1], name="NVIDIA H100 80GB HBM3", sm_count=132, total_mem_bytes=80 << 30)]
    assert [s.index for s in plan_slots("auto", mixed, "fp")] == [0]
    with pytest.raises(UserError, match="different models"):
        plan_slots([0, 1], mixed, "fp")


def _fake(index, **extra):
    return Device(index, str(index), f"fp{index}", "fake GPU", **extra)


POOL = dict(env={"TRITON_INTERPRET": "1"}, sandbox=Sandbox(SandboxSettings(mode="off")), timeout_s=120)


class _DeadOnDevice2(WorkerPool):
    """Device 2's worker processes die at start (``exit 1`` instead of Python), as workers on a GPU
    that fell off the bus die at their first CUDA call."""

    def _new(self, slot):
        if self._device(slot) != 2:
            return super()._new(slot)
        sandbox = self.sandbox
        try:
            self.sandbox = _Dead(SandboxSettings(mode="off"))
            return super()._new(slot)
        finally:
            self.sandbox = sandbox


class _Dead(Sandbox):
    def command(self, argv, limits, tag=None):
        return ["sh", "-c", "echo 'no CUDA-capable device is detected'; exit 1"]


def test_each_worker_gets_its_devices_cuda_visible_devices_and_a_failing_device_costs_its_jobs():
    """Real worker processes on three faked devices, device 2's dying at start. The probe job
    reports the CUDA_VISIBLE_DEVICES it saw: every result's ``device`` (set by the parent)
    matches it, and devices 0 and 1 both get jobs. Device 2's first job is a ``crashed`` result,
    two health checks on fresh workers fail, the device is retired, and 0 and 1 run every other
    job; placed jobs stay on their device, and none runs on the retired one. A pool whose every
    device is retired raises DevicesFailed."""
    with _DeadOnDevice2(slots=[_fake(0), _fake(1), _fake(2)], check={"cuda": False}, **POOL) as pool:
        results = dict(pool.map("probe", [{"reference": None}] * 6))
        assert sorted(results) == [0, 1, 2, 3, 4, 5]
        lost = [i for i, r in results.items() if not r.ok]
        assert len(lost) == 1 and results[lost[0]].fault is Fault.CRASHED and results[lost[0]].device == 2
        assert "no CUDA-capable device" in results[lost[0]].error
        ran = [r for i, r in results.items() if i not in lost]
        assert all(r.ok and r.value["visible_devices"] == str(r.device) for r in ran)
        assert {r.device for r in ran} == {0, 1}
        assert list(pool.retired) == [2] and "2 device check(s) failed in a row, the last crashed" in pool.retired[2]
        placed = list(pool.map("probe", [{"reference": None}] * 3, place=[1, 2, 1]))
        by = dict(placed)
        assert [(by[i].device, by[i].ok and by[i].value["visible_devices"]) for i in (0, 2)] == [(1, "1"), (1, "1")]
        assert by[1].fault is Fault.CRASHED and "cannot run jobs" in by[1].error
        assert pool.run("probe", {"reference": None}, device=0).value["visible_devices"] == "0"
    with _DeadOnDevice2(slots=[_fake(2)], check={"cuda": False}, **POOL) as pool:
        with pytest.raises(DevicesFailed, match="cuda device 2"):
            list(pool.map("probe", [{"reference": None}] * 2))


def test_a_run_on_two_faked_devices_records_where_each_observation_ran(tmp_path):
    """The exploration stage on hw=cpu with the probe's device list faked as two H200s: two pinned
    workers (one per device), the oracle on each, every observation with the device index and
    fingerprint it ran on, both devices used, run.json's device report, and the same content keys
    as a run without devices (a run on 1 GPU and on 2 plans the same work)."""
    from conftest import FLIP2D

    from kernelsynth.hardware import Hardware
    from kernelsynth.spec import load_spec
    from kernelsynth.stages.exploration import Exploration
    from kernelsynth.store import ObservationStore

    spec = load_spec(FLIP2D / "spec.yaml", dtypes=["float32"])
    hw = Hardware("cpu", "cpu (Triton interpreter)", True, torch="t", triton="t", devices=[dict(d) for d in TWO])
    ex = Exploration(trials=1, progress=False, workers="auto", sources=[], interpreter_max_configs=2)  # v0, 2 configs
    rows = ex.run(spec, hw, ObservationStore(tmp_path / "run"), tmp_path / "cache")
    fps = {s.index: s.fingerprint for s in plan_slots("auto", TWO, hw.fingerprint)}
    assert len(rows) == 2 and all(r["verdict"] == "accepted" for r in rows), [r.get("reason") for r in rows]
    assert {r["device_index"] for r in rows} == {0, 1}
    assert all(r["device_fingerprint"] == fps[r["device_index"]] for r in rows)
    report = {d["index"]: d for d in hw.devices}
    assert [report[i]["visible"] for i in (0, 1)] == ["0", "1"] and all(report[i]["workers"] == 1 for i in (0, 1))
    assert report[0]["observations"] + report[1]["observations"] == 2 and report[0]["retired"] is None
    plain = Hardware("cpu", "cpu (Triton interpreter)", True, torch="t", triton="t")
    again = Exploration(trials=1, sources=[], interpreter_max_configs=2).plan(spec, plain, cache_dir=tmp_path)
    assert sorted(r["key"] for r in rows) == sorted(j.key for j in again)
