"""The CUDA backend and the conv_relu_maxpool task, as far as a machine without a GPU can check:
every CUDA source compiles with nvcc for sm_90 in every dtype x tunable config the harness would
use, the launch/interface declarations validate, dims bind from tensors, and the Triton tensor-core
variant runs the whole pipeline through the interpreter."""

import shutil
import subprocess

import pytest
import torch
import yaml

from conftest import ROOT
from kernelsynth.backends.cuda import bind_dims, defines, extension_libraries, kernel_arch, parse_res_usage
from kernelsynth.errors import SpecError
from kernelsynth.spec import SPECS_DIR, evaluate, load_spec

CONV = SPECS_DIR / "conv_relu_maxpool"


def _cuda_builds():
    """(label, file, macros) for every raw CUDA candidate x dtype x config of every spec."""
    builds = []
    for spec_file in sorted(SPECS_DIR.glob("*/spec.yaml")):
        spec = load_spec(spec_file)
        for cand in spec.candidates:
            if cand.backend != "cuda":
                continue
            for dtype in spec.dtypes:
                for cfg in cand.configs():
                    builds.append((f"{spec.name}/{cand.version}/{dtype}/{cfg}", cand.file, defines(dtype, cfg)))
    return builds


def test_every_cuda_source_compiles_for_sm90_in_every_dtype_and_config():
    """The builds the harness would make; each is compiled with nvcc for sm_90 (and its ptxas
    resources checked) by tests/test_tasks.py, once per task found."""
    builds = _cuda_builds()
    conv = [b for b in builds if b[0].startswith("conv_relu_maxpool/")]
    assert len(conv) == 52  # conv_relu_maxpool: v1 (2 configs) + v2 (4) + v4 (4) + v5 (4) + v6 (4) + v7 (4) + v8 (2) + v9 (2), x 2 dtypes
    assert {b[0].split("/")[0] for b in builds} >= {"conv_relu_maxpool", "softmax_rows", "swiglu", "transpose2d"}
    assert all(path.suffix == ".cu" and macros[0].startswith("KS_T=") for _, path, macros in builds)


def test_nvcc_rejects_a_broken_source(tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed on this machine")
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* y) { y[0] = undefined_name; }\n')
    r = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-o", "/dev/null", str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "undefined_name" in r.stderr


def test_defines_name_the_element_type_and_every_tunable():
    assert defines("bfloat16", {"KPT": 8, "CC": 16}) == ["KS_T=__nv_bfloat16", "CC=16", "KPT=8"]
    assert defines("float32", {}) == ["KS_T=float"]
    with pytest.raises(KeyError):
        defines("bool", {})


def test_launch_formulas_give_the_grid_the_kernel_expects():
    spec = load_spec(CONV / "spec.yaml")
    v2 = next(c for c in spec.candidates if c.version == "v2")
    x = torch.empty(32, 64, 128, 128, device="meta")
    params = {"conv.weight": torch.empty(128, 64, 3, 3, device="meta"), "conv.bias": torch.empty(128, device="meta")}
    dims = bind_dims(spec.interface, dict(params, x=x))
    assert dims == {"N": 32, "C_in": 64, "H": 128, "W": 128, "C_out": 128, "PH": 64, "PW": 64}
    env = dict(dims, KPT=8, CC=16)
    # 8x8 pooled tiles x groups of 32 channels x images, in gridDim.x alone (y and z are capped at
    # 65535: session 11 on the H200, every v2/v4/v5 config failed with CUDA_ERROR_INVALID_VALUE on
    # rule 12's shapes with a batch past 65536)
    assert [evaluate(g, env) for g in v2.launch["grid"]] == [64 * 4 * 32, 1, 1]
    assert [evaluate(e, env) for e in spec.interface["output"]] == [32, 128, 64, 64]
    # v4: one pooled row x BW / 2 pooled columns x BN channels per block, dynamic shared memory
    v4 = next(c for c in spec.candidates if c.version == "v4")
    env = dict(dims, BW=128, BN=64)
    assert [evaluate(g, env) for g in v4.launch["grid"]] == [1 * 64 * 64, 1, 1]
    assert evaluate(v4.launch["shared_bytes"], env) == 90496  # > 48 KiB: the backend opts in
    assert [evaluate(g, dict(dims, W=19, PW=9, BW=64, BN=128)) for g in v4.launch["grid"]] == [1 * 64 * 32, 1, 1]
    big = dict(dims, N=70001, PH=3, PW=3, H=7, W=7, BW=64, BN=64, KPT=4, CC=8, ROWS=4, SM_COUNT=132)  # a rule-12 batch
    for c in spec.candidates:
        if c.backend == "cuda":
            grid = [evaluate(g, dict(big, BLOCK=128)) for g in c.launch["grid"]]
            assert grid[0] < 2 ** 31 and grid[1] <= 65535 and grid[2] <= 65535, (c.version, grid)


def test_an_arch_specific_launch_compiles_for_the_a_target_and_fits_hopper():
    """v6 and v7 (wgmma) ask for sm_90a through their launch blocks; the others keep the device's arch. Their
    grid and dynamic shared memory at the timing shape, for every config, fit one H200 SM."""
    spec = load_spec(CONV / "spec.yaml")
    by = {c.version: c for c in spec.candidates}
    assert kernel_arch("sm_90", by["v6"].launch) == "sm_90a"
    assert kernel_arch("sm_90a", by["v6"].launch) == "sm_90a"
    assert kernel_arch("sm_90", by["v5"].launch) == "sm_90" and kernel_arch("sm_80", None) == "sm_80"
    assert [c.version for c in spec.candidates if c.launch and c.launch["arch_specific"]] == ["v6", "v7", "v8", "v9"]
    dims = {"N": 32, "C_in": 64, "H": 128, "W": 128, "C_out": 128, "PH": 64, "PW": 64}
    for cfg in by["v6"].configs():
        env = dict(dims, **cfg)
        grid = [evaluate(g, env) for g in by["v6"].launch["grid"]]
        assert grid == [1 * 64 * 32 * (128 // cfg["BN"]), 1, 1]
        assert [evaluate(b, env) for b in by["v6"].launch["block"]] == [256, 1, 1]
        assert 48 * 1024 < evaluate(by["v6"].launch["shared_bytes"], env) <= 227 * 1024, cfg
    # v7: persistent blocks, min(tiles, 132 SMs x blocks per SM); at BN = 64 two blocks fit one SM
    # (228 KiB of shared memory per SM, 1 KiB reserved per block)
    assert kernel_arch("sm_90", by["v7"].launch) == "sm_90a"
    for cfg in by["v7"].configs():
        env = dict(dims, **cfg, SM_COUNT=132)  # RawKernelModel binds the device's count (H200: 132)
        grid = [evaluate(g, env) for g in by["v7"].launch["grid"]]
        tiles = (64 // (128 // cfg["ROWS"])) * (64 // (cfg["ROWS"] // 2)) * 32 * (128 // cfg["BN"])
        assert tiles == 2048 * 128 // cfg["BN"] and grid == [min(tiles, 132 * (128 // cfg["BN"])), 1, 1], cfg
        assert [evaluate(b, env) for b in by["v7"].launch["block"]] == [256, 1, 1]
        smem = evaluate(by["v7"].launch["shared_bytes"], env)
        assert 48 * 1024 < smem <= 227 * 1024, cfg
        assert (128 // cfg["BN"]) * (smem + 1024) <= 228 * 1024, cfg
        small = dict(env, N=1, PH=1, PW=1, H=2, W=2)  # fewer tiles than SMs: one block per tile
        assert [evaluate(g, small) for g in by["v7"].launch["grid"]] == [128 // cfg["BN"], 1, 1]


def test_bind_dims_rejects_tensors_that_disagree():
    spec = load_spec(CONV / "spec.yaml")
    params = {"conv.weight": torch.empty(128, 64, 3, 3, device="meta"), "conv.bias": torch.empty(128, device="meta")}
    with pytest.raises(ValueError, match="C_in"):
        bind_dims(spec.interface, dict(params, x=torch.empty(2, 3, 8, 8, device="meta")))
    with pytest.raises(ValueError, match="declares"):
        bind_dims(spec.interface, dict(params, x=torch.empty(2, 64, 8, device="meta")))


def _broken(tmp_path, mutate):
    dst = tmp_path / "conv"
    shutil.copytree(CONV, dst, ignore=shutil.ignore_patterns("__pycache__"))
    doc = yaml.safe_load((dst / "spec.yaml").read_text())
    mutate(doc)
    (dst / "spec.yaml").write_text(yaml.safe_dump(doc))
    return dst / "spec.yaml"


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["candidates"][1].pop("launch"), "candidates[1].launch"),
    (lambda d: d["candidates"][3].update(launch=d["candidates"][1]["launch"]), "candidates[3].launch"),
    (lambda d: d["launch"].pop("args"), "candidates[1].launch.args"),  # the spec-level default of v1 and v2
    (lambda d: d["candidates"][2].update(allow_reference_ops=True), "candidates[2].allow_reference_ops"),
    (lambda d: d.pop("interface"), "interface"),
    (lambda d: d["interface"]["inputs"].update(x=["N", "C_in", "Hx", "W"]), "interface.inputs.x"),
    (lambda d: d["interface"].update(output=["N", "C_out", "QH", "PW"]), "interface.output[2]"),
    (lambda d: d["interpret"].update(dtypes=["float16"]), "interpret.dtypes"),
    (lambda d: d["candidates"][6]["launch"].update(arch_specific="yes"), "candidates[6].launch.arch_specific"),
])
def test_broken_cuda_declarations_name_the_field(tmp_path, mutate, field):
    with pytest.raises(SpecError) as e:
        load_spec(_broken(tmp_path, mutate))
    assert e.value.field == field


def test_conv_task_runs_through_the_interpreter_and_states_its_precision(conv_interpreter_run):
    # the run (hw=cpu, float32, 1 trial) is tests/conftest.py's: the README's CPU sweep's conv job
    result = conv_interpreter_run
    obs = {o["version"]: o for o in result.observations}
    assert set(obs) == {"v0", "v3"}  # the CUDA versions need a GPU; bfloat16 is GPU-only (spec)
    assert all(o["verdict"] == "accepted" and o["dtype"] == "float32" for o in obs.values()), obs
    assert obs["v3"]["max_abs_err"] < 1e-5  # float32 on the interpreter: no TF32 rounding
    assert obs["v0"]["reference_ops_used"]  # eager v0 calls the reference's operators, and may
    [traj] = result.trajectories
    assert traj["accepted"] and traj["versions"] == ["v0", "v3"], traj
    from datasets import load_dataset

    [rec] = load_dataset(str(result.dataset_dir), split="train")
    assert rec["task"] == "conv_relu_maxpool" and rec["precision_policy"].startswith("TF32")
    assert rec["metrics"]["best_version"] == "v3" and "tl.dot" in rec["answer_code"]


def test_res_usage_lines_parse_into_per_kernel_resources():
    text = ("Resource usage:\n Common:\n  GLOBAL:0\n Function _Z24conv_relu_maxpool_kernelIfEvPKT_:\n"
            "  REG:31 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:412 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
            " Function _Z24conv_relu_maxpool_kernelIN3c108BFloat16EEvPKT_:\n"
            "  REG:40 STACK:16 SHARED:1024 LOCAL:24 CONSTANT[0]:412 TEXTURE:0 SURFACE:0 SAMPLER:0\n")
    assert parse_res_usage(text) == [{"regs": 31, "stack": 0, "shared": 0, "local": 0},
                                     {"regs": 40, "stack": 16, "shared": 1024, "local": 24}]


def test_extension_held_only_by_the_candidate_module_is_found(tmp_path):
    import types

    lib = tmp_path / "torch_extensions" / "ks_ext" / "ks_ext.so"
    ext = types.ModuleType("ks_ext")
    ext.__file__ = str(lib)
    cand = types.ModuleType("cand")
    cand._ext = ext  # what load_inline returns; it is not put in sys.modules
    assert extension_libraries(set(), cand) == [str(lib)]
    assert extension_libraries(set(__import__("sys").modules), None) == []


def test_a_grid_past_cudas_limits_is_a_clear_error_before_the_driver_is_called():
    """Session 11 on the H200: v2/v4/v5 launched gridDim.z = N * ktiles > 65535 and the driver
    answered CUDA_ERROR_INVALID_VALUE with nothing else; the launch now names the dimension."""
    from kernelsynth.backends.cuda import GRID_LIMITS, CompiledKernel

    kernel = object.__new__(CompiledKernel)  # no module loaded: the check comes first
    with pytest.raises(ValueError, match=r"gridDim.z = 70001 is outside CUDA's \[1, 65535\]"):
        kernel.launch([4, 1, 70001], [256, 1, 1], 0, 0, [])
    with pytest.raises(ValueError, match=r"gridDim.x = 0"):
        kernel.launch([0, 1, 1], [256, 1, 1], 0, 0, [])
    assert GRID_LIMITS == (2 ** 31 - 1, 65535, 65535)


def test_launch_formulas_see_the_devices_multiprocessor_count_read_once():
    """``SM_COUNT`` in a grid formula (v7's persistent grid) is the device's multiprocessor count,
    read from torch once per device."""
    from types import SimpleNamespace

    from kernelsynth.backends.cuda import RawKernelModel

    asked = []

    def props(device):
        asked.append(device)
        return SimpleNamespace(multi_processor_count=78 if device == "cuda:1" else 132)

    m = RawKernelModel.__new__(RawKernelModel)
    m._torch = SimpleNamespace(cuda=SimpleNamespace(get_device_properties=props))
    assert [m._sm_count("cuda:0"), m._sm_count("cuda:1"), m._sm_count("cuda:0")] == [132, 78, 132]
    assert asked == ["cuda:0", "cuda:1"]
    spec = load_spec(ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml")
    v7 = next(c for c in spec.candidates if c.version == "v7")
    env = {"N": 32, "C_in": 64, "H": 128, "W": 128, "C_out": 128, "PH": 64, "PW": 64, "BN": 128, "ROWS": 2}
    assert evaluate(v7.launch["grid"][0], dict(env, SM_COUNT=78)) == 78
