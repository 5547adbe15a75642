"""Tasks are folders: discovery over the spec roots, and one test per task found, so a new task
is tested by adding its folder (specs/<task>/, or a folder in $KERNELSYNTH_SPECS when the suite
runs): its spec loads as a task, its ladder runs on the Triton interpreter, and every raw CUDA
source compiles for sm_90 in every dtype x config the harness would build."""

import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import FLIP2D, compose
from kernelsynth import engine
from kernelsynth.errors import SpecError, UserError
from kernelsynth.spec import load_spec
from kernelsynth.tasks import discover

TASKS = discover()


def _copy_task(root, name, src=FLIP2D):
    dst = root / name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


# ---------------------------------------------------------------- discovery
def test_extra_roots_from_the_environment_and_the_config(tmp_path, monkeypatch):
    env_root, cfg_root = tmp_path / "env_root", tmp_path / "cfg_root"
    _copy_task(env_root, "flip_env")
    _copy_task(cfg_root, "flip_cfg")
    (env_root / "_shared").mkdir()  # "_" folders hold includes, never a task
    (env_root / "_shared" / "spec.yaml").write_text("not a task\n")
    monkeypatch.setenv("KERNELSYNTH_SPECS", str(env_root))
    assert set(discover()) == set(TASKS) | {"flip_env"}
    assert discover([str(cfg_root)])["flip_cfg"] == cfg_root / "flip_cfg" / "spec.yaml"
    # task=<folder name> works for both kinds of root, as written, with no conf/task file
    spec = engine.load_task(compose(["task=flip_env", "task.tunables.BLOCK_N=256"]))
    assert spec.name == "flip_env" and spec.path == env_root / "flip_env" / "spec.yaml"
    assert all(c.tunables["BLOCK_N"] == [256] for c in spec.candidates)
    spec = engine.load_task(compose(["task=flip_cfg", f"task.search_path=[{cfg_root}]"]))
    assert spec.name == "flip_cfg" and spec.path.parent == cfg_root / "flip_cfg"


def test_the_same_task_name_in_two_roots_is_an_error_naming_both_files(tmp_path, monkeypatch):
    _copy_task(tmp_path, "flip2d")
    monkeypatch.setenv("KERNELSYNTH_SPECS", str(tmp_path))
    with pytest.raises(SpecError) as e:
        discover()
    assert str(tmp_path / "flip2d" / "spec.yaml") in str(e.value) and str(FLIP2D / "spec.yaml") in str(e.value)


def test_unknown_task_and_missing_root_are_one_line_errors(tmp_path, monkeypatch):
    with pytest.raises(SpecError) as e:
        engine.load_task(compose(["task=nosuchtask"]))
    # every task found is named, sorted (the catalog grows: no fixed prefix)
    assert f"known tasks: {sorted(TASKS)}" in str(e.value) and "\n" not in str(e.value)
    assert "did you mean" not in str(e.value)
    for typo, meant in (("flip2dd", "task=flip2d?"), ("Flip2d", "task=flip2d?"),
                        ("softmax", "task=softmax_rows or task=softmax_backward?")):  # session 30's new user
        with pytest.raises(SpecError) as e:
            engine.load_task(compose([f"task={typo}"]))
        assert str(e.value).endswith(f"got '{typo}' -- did you mean {meant}"), str(e.value)
    monkeypatch.setenv("KERNELSYNTH_SPECS", str(tmp_path / "missing"))
    with pytest.raises(UserError, match="KERNELSYNTH_SPECS: .*missing is not a folder"):
        discover()


def test_a_name_that_is_not_the_folder_is_refused_for_a_discovered_task(tmp_path, monkeypatch):
    dst = _copy_task(tmp_path, "flip_named")
    (dst / "spec.yaml").write_text("name: flip2d\n" + (dst / "spec.yaml").read_text())
    monkeypatch.setenv("KERNELSYNTH_SPECS", str(tmp_path))
    with pytest.raises(SpecError) as e:
        engine.load_task(compose(["task=flip_named"]))
    assert e.value.field == "name" and str(dst / "spec.yaml") in str(e.value) and "'flip_named'" in str(e.value)


def test_tools_tasks_lists_every_task_with_category_dtypes_backends_and_ladder(tmp_path, capsys):
    from kernelsynth.tools import main

    broken = _copy_task(tmp_path, "broken")
    (broken / "spec.yaml").write_text("dims: [M]\n")
    assert main(["tasks"]) == 0
    lines = {ln.split()[0]: ln.split() for ln in capsys.readouterr().out.splitlines()}
    assert lines["task"][:5] == ["task", "category", "dtypes", "backends", "ladder"]
    assert lines["flip2d"][1:5] == ["data_movement", "float32,bfloat16,float16,int32", "triton", "6"]
    assert lines["conv_relu_maxpool"][1:5] == ["fused_conv", "float32,bfloat16", "cuda,torch,triton", "10"]
    assert main(["tasks", "--search-path", str(tmp_path)]) == 1  # a broken task is listed with its error
    out = capsys.readouterr().out
    assert "broken" in out and "error:" in out and "required" in out and "flip2d" in out


# ---------------------------------------------------------------- one test per task found
#: Tasks whose interpreter run is a session fixture of tests/conftest.py, shared with other test
#: files (a run of a README command, made once): their ladder tests follow the parametrized one.
SHARED_RUNS = {"conv_relu_maxpool": "conv_interpreter_run", "flip2d": "flip2d_cheap_run"}


@pytest.mark.parametrize("name", sorted(set(TASKS) - set(SHARED_RUNS)))
def test_task_runs_its_ladder_on_the_interpreter(name, tmp_path):
    """Every version the interpreter can run (Triton and torch; raw CUDA needs a GPU) verifies on
    the spec's interpreter shapes and the trajectory is accepted, with 1 trial per shape and the
    first interpreter dtype to keep CI short."""
    spec = load_spec(TASKS[name], task_folder=True)
    assert spec.name == name
    dtype = (spec.interpret_dtypes or spec.dtypes)[0]
    cfg = compose(["hw=cpu", f"task={name}", f"task.dtypes=[{dtype}]", "exploration.trials=1",
                   "exploration.progress=false", f"cache_dir={tmp_path / 'cache'}"])
    _assert_ladder_accepted(spec, engine.run(cfg, tmp_path / "run"))


def test_conv_relu_maxpool_runs_its_ladder_on_the_interpreter(conv_interpreter_run):
    """The ladder test of SHARED_RUNS' task, on the shared run (the conv job of the README's CPU sweep:
    its first interpreter dtype, float32; 1 trial per shape, the parametrized test's config)."""
    spec = load_spec(TASKS["conv_relu_maxpool"], task_folder=True)
    assert conv_interpreter_run.spec.path == spec.path
    assert {o["dtype"] for o in conv_interpreter_run.observations} == {(spec.interpret_dtypes or spec.dtypes)[0]}
    _assert_ladder_accepted(spec, conv_interpreter_run)


def test_flip2d_runs_its_ladder_on_the_interpreter(flip2d_cheap_run):
    """The ladder test of SHARED_RUNS' flip2d, on the shared run: the parametrized test's config
    (float32, its first dtype; 1 trial per shape)."""
    spec = load_spec(TASKS["flip2d"], task_folder=True)
    assert flip2d_cheap_run.spec.path == spec.path
    assert {o["dtype"] for o in flip2d_cheap_run.observations} == {(spec.interpret_dtypes or spec.dtypes)[0]}
    _assert_ladder_accepted(spec, flip2d_cheap_run)


def _assert_ladder_accepted(spec, result):
    runnable = [c.version for c in spec.candidates if c.backend != "cuda"]
    assert runnable, "a task needs at least one version the interpreter runs"
    cands = [o for o in result.observations if o["role"] == "candidate"]
    assert sorted({o["version"] for o in cands}) == sorted(runnable)
    bad = [(o["version"], o["config"], o["reason"][:300]) for o in cands if o["verdict"] != "accepted"]
    assert not bad, bad
    [traj] = result.trajectories
    assert traj["accepted"] and traj["versions"] == runnable, traj


def _cuda_builds(name):
    """(label, file, macros, arch) of every build the harness would make on an sm_90 device (the
    arch-specific sm_90a where the launch block asks for it: kernelsynth.backends.cuda.kernel_arch)."""
    from kernelsynth.backends.cuda import defines, kernel_arch

    spec = load_spec(TASKS[name], task_folder=True)
    return [(f"{name}/{c.version}/{dtype}/{cfg}", c.file, defines(dtype, cfg), kernel_arch("sm_90", c.launch))
            for c in spec.candidates if c.backend == "cuda" for dtype in spec.dtypes for cfg in c.configs()]


CUDA_TASKS = [n for n in sorted(TASKS) if _cuda_builds(n)]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize("name", CUDA_TASKS)
def test_task_cuda_sources_compile_for_sm90_in_every_dtype_and_config(name, nvcc_cubin):
    def nvcc(b):
        label, path, macros, arch = b
        # -cubin: device code only, what the harness's NVRTC compiles (no host pass: it never builds one)
        return (label, *nvcc_cubin(arch, macros, path))

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(nvcc, _cuda_builds(name)))
    failed = [(label, err[-2000:]) for label, rc, err in results if rc != 0]
    assert not failed, failed
    for label, _, err in results:  # ptxas reports the resources of the one kernel in each file
        assert "Used" in err and "registers" in err, (label, err)


def test_closest_is_the_one_did_you_mean_of_every_error():
    """errors.closest: case-insensitive, spelt as the options spell it, best first, [] when none is close;
    SpecError's hint ends the message (find_task no longer edits the exception's args)."""
    from kernelsynth.errors import closest

    assert closest("H100", ["a100", "h100", "h200"]) == ["h100"]
    assert closest("Flip2D", ["flip2d", "transpose2d"]) == ["flip2d"]
    assert closest("softmax", ["softmax_rows", "softmax_backward", "swiglu"], n=3) == ["softmax_rows", "softmax_backward"]
    assert closest("zzz", ["flip2d"]) == []
    assert closest("dtype", ["dtypes", "DTYPE"]) == ["DTYPE"]  # an exact match (any case) ranks first
    e = SpecError("p.yaml", "f", "an int", 3, hint=" -- did you mean x?")
    assert str(e) == "p.yaml: field 'f': expected an int, got 3 -- did you mean x?" and e.hint == " -- did you mean x?"
    assert e.args == (str(e),)
