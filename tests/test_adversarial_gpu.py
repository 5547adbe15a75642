"""GPU-only adversarial candidates (tests/adversarial/gpu): streams, recycled allocator memory,
caches inside timing loops, warm-up detection, timer patching and races. Each test asserts both
halves: the naive harness (tests/adversarial/naive.py) is fooled, kernelsynth is not.

Run on a CUDA machine:  KERNELSYNTH_TEST_GPU=1 python -m pytest -q tests/test_adversarial_gpu.py
(skipped elsewhere, like tests/test_gpu.py).
"""

import os
import re
import sys

import pytest
import torch

from conftest import ROOT, compose
from kernelsynth import engine
from kernelsynth.loading import import_file

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(os.environ.get("KERNELSYNTH_TEST_GPU") != "1",
                                                   reason="needs KERNELSYNTH_TEST_GPU=1 and a CUDA GPU")]

ADV = ROOT / "tests" / "adversarial"
sys.path.insert(0, str(ADV))
from naive import naive_accepts, naive_time_ms, restored_namespaces  # noqa: E402

FLIP = import_file(ROOT / "specs" / "flip2d" / "reference.py")
CUDA = torch.device("cuda")


def _model(rel, **config):
    return import_file(ADV / rel).ModelNew(**config).to(CUDA)


def _honest():
    return import_file(ROOT / "specs" / "flip2d" / "kernels" / "v1_single_pass.py").ModelNew(
        BLOCK_M=1, BLOCK_N=1024, num_warps=8)


def _first_line(o):
    return o["reason"].splitlines()[0] if o["reason"] else ""


@pytest.fixture(scope="module")
def gpu_obs(tmp_path_factory):
    """One engine run of tests/adversarial/gpu/spec.yaml: {version: observation}."""
    run_dir = tmp_path_factory.mktemp("gpu_adversarial")
    cfg = compose(["hw=auto", "exploration.progress=false", "exploration.trials=2", "exploration.profile=false",
                   f"task.spec={ADV / 'gpu'}", f"cache_dir={run_dir / 'cache'}"])
    return {o["version"]: o for o in engine.run(cfg, run_dir).observations}


@pytest.mark.parametrize("version", ["h1", "h2", "h3"])
def test_honest_kernels_are_accepted_and_timed(gpu_obs, version):
    o = gpu_obs[version]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert o["median_ms"] > 0 and o["synced_ms"] < 1.5 * o["median_ms"] + 0.2
    assert o["pct_of_copy_ceiling"] < 105


def test_side_stream_work_cannot_show_a_speedup(gpu_obs):
    """Work moved to a private stream either stays inside the timed region (do_bench's cache
    clearing and the next launch overlap with it) or is rejected by the timing-integrity rules;
    it never looks faster than the honest kernel. Naive: events on the current stream see no work."""
    x = torch.randn(8192, 8192, device=CUDA)
    cheat, honest = _model("gpu/streams/side_stream.py"), _honest()
    assert naive_time_ms(lambda: cheat(x)) < naive_time_ms(lambda: honest(x))
    c1 = gpu_obs["c1"]
    # since every timed call's output is checked against a changed input (rule 10, seen on the
    # H200 2026-12-01): the call returns before its side-stream work is done, so the output of a
    # timed call is wrong
    if c1["verdict"] == "rejected":
        assert c1["fault"] == "timing_integrity" or (
            c1["fault"] == "wrong_output" and "timed call" in _first_line(c1)), _first_line(c1)
    else:
        assert c1["median_ms"] >= 0.9 * gpu_obs["h1"]["median_ms"], c1


def test_recycled_reference_output(gpu_obs):
    shapes = [{"M": 512, "N": 1024}, {"M": 1024, "N": 2048}]
    assert naive_accepts(_model("gpu/recycled_memory/recycled_output.py"), FLIP.Model(), FLIP.get_inputs, shapes,
                         device=CUDA, trials=1)
    o = gpu_obs["c2"]
    assert o["fault"] == "wrong_output" and "not bit-exact" in _first_line(o), _first_line(o)


def test_cache_inside_the_timing_loop_is_rejected(gpu_obs):
    """A cache keyed on the tensor's version counter: caught as a stale answer (the in-place
    changes of rule 10 keep the version, seen on the H200 2026-12-01) or, if it got past them,
    by the roofline floor of its timed calls."""
    x = torch.randn(8192, 8192, device=CUDA)
    cheat, honest = _model("gpu/caching/version_cache.py"), _honest()
    assert naive_accepts(cheat, FLIP.Model(), FLIP.get_inputs, [{"M": 64, "N": 1000}], device=CUDA)
    assert naive_time_ms(lambda: cheat(x)) < 0.5 * naive_time_ms(lambda: honest(x))
    o = gpu_obs["c3"]
    assert (o["fault"] == "wrong_output" and "stale answer" in _first_line(o)) or \
        (o["fault"] == "timing_integrity" and "below the roofline floor" in _first_line(o)), _first_line(o)


def test_warm_up_detection_is_rejected(gpu_obs):
    x = torch.randn(8192, 8192, device=CUDA)
    cheat = _model("gpu/warmup/warmup_detect.py")
    assert naive_accepts(cheat, FLIP.Model(), FLIP.get_inputs, [{"M": 64, "N": 1000}], device=CUDA)
    # against its own full-work path (index_select reaches less of the copy bandwidth than the
    # Triton kernel, so against _honest() half its work was no faster: seen on the H200)
    idx = torch.arange(x.shape[1] - 1, -1, -1, device=CUDA)
    assert naive_time_ms(lambda: cheat(x)) < 0.75 * naive_time_ms(lambda: torch.index_select(x, 1, idx))
    o = gpu_obs["c4"]
    assert o["verdict"] == "rejected", o
    # caught by the floor, by a timed call's output, or (seen on the H200) first by the
    # partial-staleness change: its short path reuses the last answer when few elements changed
    assert (o["fault"] == "timing_integrity" and "roofline floor" in _first_line(o)) or \
        (o["fault"] == "wrong_output" and re.search("timed call|stale answer", _first_line(o))), _first_line(o)


def test_patched_event_timer_is_tampering(gpu_obs):
    x = torch.randn(4096, 4096, device=CUDA)
    honest = _honest()
    with restored_namespaces():
        real = naive_time_ms(lambda: honest(x))
        import importlib.util

        spec = importlib.util.spec_from_file_location("fresh_event_patch", ADV / "cpu" / "timer" / "patch_event_timer.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        faked = naive_time_ms(lambda: honest(x))
    assert faked < 0.01 < real
    o = gpu_obs["c5"]
    assert o["fault"] == "tampering" and "torch.cuda.Event.elapsed_time" in _first_line(o), _first_line(o)


def test_race_that_passes_sometimes_is_rejected(gpu_obs):
    cheat = _model("gpu/races/cross_tile_race.py", BLOCK=1024)
    small = [{"M": 1, "N": 1500}]  # two programs, both resident at once
    passes = sum(naive_accepts(cheat, FLIP.Model(), FLIP.get_inputs, small, device=CUDA, trials=1, seed=s)
                 for s in range(5))
    assert passes >= 1
    o = gpu_obs["c6"]
    assert o["fault"] == "wrong_output" and ("not bit-exact" in _first_line(o) or "not deterministic" in _first_line(o))


# ---------------------------------------------------------------- issue 10, classes 3-6 (numcov)
CONV = import_file(ROOT / "specs" / "conv_relu_maxpool" / "reference.py")


@pytest.fixture(scope="module")
def gpu_conv(tmp_path_factory):
    """One engine run of tests/adversarial/gpu/conv.yaml: ({version: observation}, trajectories)."""
    run_dir = tmp_path_factory.mktemp("gpu_conv_adversarial")
    cfg = compose(["hw=auto", "exploration.progress=false", "exploration.trials=2", "exploration.profile=false",
                   f"task.spec={ADV / 'gpu' / 'conv.yaml'}", f"cache_dir={run_dir / 'cache'}"])
    res = engine.run(cfg, run_dir)
    return {o["version"]: o for o in res.observations}, res.trajectories


@pytest.mark.parametrize("version", ["hv1", "hv3", "hdirect"])
def test_honest_conv_kernels_launch_only_their_own_kernels(gpu_conv, version):
    """The launched-kernel census (rule 14, torch.profiler) recognises Triton kernels by their
    function names and NVRTC kernels by their launch name: no foreign kernel, no library call."""
    o = gpu_conv[0][version]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert o["kernel_census"] is True, o
    assert o["foreign_kernels"] is None and o["library_calls"] is None, (o["foreign_kernels"], o["library_calls"])


def test_eager_v0_is_labelled_and_exempt(gpu_conv):
    o = gpu_conv[0]["v0"]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert "convolution" in o["library_calls"] and o["foreign_kernels"]  # cuDNN kernels under aten ops
    (traj,) = gpu_conv[1]
    # exempt from the census rules (a v0 may call the library); a v0 timing spread (cuDNN on the
    # small adversarial shapes) is a different rule, not an exemption failure
    assert not any(r.startswith(("v0: library calls", "v0: calls the reference", "v0: no config"))
                   for r in traj["reasons"]), traj["reasons"]


def test_cudnn_hidden_from_the_dispatch_census_is_caught_by_the_kernel_census(gpu_conv):
    """The convolution runs with the Python dispatch modes off: the aten census sees only the
    epilogue's allocation; the profiler sees cuDNN's kernels under aten::cudnn_convolution."""
    shapes = [{"N": 1, "C_in": 3, "C_out": 8, "H": 5, "W": 7}]
    torch.manual_seed(0)
    ref = CONV.Model(3, 8).to(CUDA)
    torch.manual_seed(0)
    cheat = import_file(ADV / "gpu" / "fallback" / "hidden_cudnn.py").ModelNew(3, 8).to(CUDA)
    assert naive_accepts(cheat, ref, CONV.get_inputs, shapes, device=CUDA)
    o = gpu_conv[0]["g1"]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    # since one profiled call also runs outside the dispatch modes (rule 14, 2026-12-01) the
    # dispatch census sees the convolution too; the kernel census must see it either way
    assert o["kernel_census"] is True and o["foreign_kernels"], o
    # the launched kernel is cuDNN's (named ..._cudnn), under aten::cudnn_convolution or, as seen
    # on the H200 with torch 2.11, under aten::conv2d
    assert re.search(r"cudnn|convolution|conv2d", o["foreign_kernels"]), o["foreign_kernels"]
    (traj,) = gpu_conv[1]
    assert any(r.startswith("g1: library calls (") and "kernel(s)" in r for r in traj["reasons"]), traj["reasons"]


@pytest.mark.parametrize("version", ["g2", "g3"])
def test_cublas_through_unfold_and_matmul_is_labelled_by_both_censuses(gpu_conv, version):
    o = gpu_conv[0][version]
    assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
    assert "im2col" in o["library_calls"], o["library_calls"]
    assert o["foreign_kernels"] and ("mm" in o["foreign_kernels"] or "matmul" in o["foreign_kernels"]), \
        o["foreign_kernels"]


def test_memo_inside_the_timing_loop_misses_the_partial_change(gpu_obs):
    """Rule 10 inside the timed calls: one element and a small region of the input change right
    before the probe call; a memo on sampled elements answers it stale (or, if the probe came
    before the memo started, the timing floor catches the work it skips)."""
    cheat = _model("gpu/caching/sampled_memo_timed.py")
    assert naive_accepts(cheat, FLIP.Model(), FLIP.get_inputs, [{"M": 64, "N": 1000}], device=CUDA)
    o = gpu_obs["c7"]
    assert o["verdict"] == "rejected", o
    assert (o["fault"] == "wrong_output" and "timed call" in _first_line(o)) or o["fault"] == "timing_integrity", \
        _first_line(o)


def test_kernel_wrong_only_for_large_ragged_m_is_caught_on_the_gpu(gpu_obs):
    """Rule 12 on a GPU: the GPU spec's listed M stay below 20; a derived shape makes M large and ragged."""
    o = gpu_obs["c8"]
    assert (o["verdict"], o["fault"]) == ("rejected", "wrong_output"), _first_line(o)
    import re

    m = re.search(r"shape (\d+)x\d+, trial 0: not bit-exact", _first_line(o))
    assert m and int(m.group(1)) >= 257, _first_line(o)


# ---------------------------------------------------------------- output dtype and precision (rules 3, 23)
# A bfloat16-precision answer on a float32 task fails the precision rule; on the large ragged
# shapes (rule 12) its error also exceeds the float32 bound first (seen on the H200). Either says
# it is not float32-precise. The precision rule alone rejecting them is tests/test_precision.py's.
BELOW_TF32 = r"precision below the declared policy tf32|outside atol=0\.005, rtol=0\.005"
CONV_GPU_CHEATS = {  # (version, dtype) -> regex of the reason's first line
    ("g_bf16_cudnn", "float32"): BELOW_TF32,
    ("dtype_half", "float32"): r"output dtype torch\.float16, expected torch\.float32",
    ("dtype_float", "bfloat16"): r"output dtype torch\.float32, expected torch\.bfloat16",
    ("precision_chunks", "float32"): BELOW_TF32,
    # or, seen on the H200 2026-12-01, its error leaves the bfloat16 tolerance on one of the
    # changed inputs of rule 10 first
    ("precision_chunks", "bfloat16"): r"precision below the declared policy bf16|outside atol=0\.01, rtol=0\.016",
    ("precision_9bit", "float32"): BELOW_TF32,
}
CONV_GPU_HONEST = ["v0", "honest_tf32", "honest_split_k", "honest_prepacked", "honest_v3"]


@pytest.fixture(scope="module")
def gpu_conv_obs(tmp_path_factory):
    """One engine run of tests/adversarial/gpu/conv_precision.yaml: {(version, dtype): [observations]}."""
    run_dir = tmp_path_factory.mktemp("gpu_conv_precision")
    cfg = compose(["hw=auto", "exploration.progress=false", "exploration.trials=2", "exploration.profile=false",
                   f"task.spec={ADV / 'gpu' / 'conv_precision.yaml'}", f"cache_dir={run_dir / 'cache'}"])
    obs = {}
    for o in engine.run(cfg, run_dir).observations:
        obs.setdefault((o["version"], o["dtype"]), []).append(o)
    for (v, d), rows in sorted(obs.items()):  # the margins, for VERIFICATION.md (pytest -s shows them)
        for o in rows:
            print(f"precision {v} {d} {o['config']}: {o['verdict']} rms={o['precision_rms']} "
                  f"honest={o['precision_honest_rms']} bound={o['precision_bound']} {_first_line(o)[:160]}")
    return obs


@pytest.mark.parametrize("case", sorted(CONV_GPU_CHEATS))
def test_conv_dtype_and_precision_cheats_are_rejected_on_the_gpu(gpu_conv_obs, case):
    for o in gpu_conv_obs[case]:
        assert o["verdict"] == "rejected" and o["fault"] == "wrong_output", (o["fault"], _first_line(o))
        assert re.search(CONV_GPU_CHEATS[case], _first_line(o)), _first_line(o)


@pytest.mark.parametrize("version", CONV_GPU_HONEST)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_honest_conv_including_tf32_tl_dot_is_accepted_on_the_gpu(gpu_conv_obs, version, dtype):
    for o in gpu_conv_obs[(version, dtype)]:
        assert (o["verdict"], o["fault"]) == ("accepted", "ok"), _first_line(o)
        assert o["precision_rms"] <= o["precision_bound"], o
