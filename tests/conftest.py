"""Test setup: kernels run on CPU tensors through the Triton interpreter unless
KERNELSYNTH_TEST_GPU=1 (set before anything imports triton).

A plain ``python -m pytest -q`` runs the suite in 2 processes (pytest-xdist, ``-n auto`` in
pyproject.toml; :func:`pytest_xdist_auto_num_workers`): most of a test's time is one worker
process running the interpreter on one core, so two share a 2-core machine. Tests that share a
module- or session-scoped fixture run in the same process (:func:`pytest_collection_modifyitems`),
so each fixture is built once; the slowest tests are sent first.
"""

import os
import shutil
import sys
from pathlib import Path

import pytest

if os.environ.get("KERNELSYNTH_TEST_GPU") != "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "conf"
FLIP2D = ROOT / "specs" / "flip2d"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def flip2d_copy(tmp_path):
    """A writable copy of specs/flip2d for tests that break it."""
    dst = tmp_path / "flip2d"
    shutil.copytree(FLIP2D, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def listed_copy(src, dst):
    """The task folder ``src`` copied to ``dst`` with ``shapes: {derived: false}`` added: verified on
    its listed shapes only, for tests whose claim (a merge, a push, a launcher) does not depend on
    the shapes; rule 12's derived shapes are about half of a flip2d version's interpreter time.
    A copy named as its task (``dst`` = .../flip2d) and given by ``task.spec`` is still that task."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    text = (dst / "spec.yaml").read_text()
    assert "\nshapes:\n" in text
    (dst / "spec.yaml").write_text(text.replace("\nshapes:\n", "\nshapes:\n  derived: false\n", 1))
    return dst


def compose(overrides=()):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from kernelsynth.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides))


#: Test files whose tests take the longest (measured on a 2-core CPU, ``--durations``): sent to the
#: processes first, so no long test starts last while the other process idles. Order only; every
#: test runs. test_readme.py's commands (readme_runs) are the longest group, with the tests that read
#: their runs (test_tasks.py's flip2d and conv ladder tests, test_cuda_backend.py's conv test,
#: test_usercmds.py's record tests, test_tunables.py's sweep); test_resume.py is one group of four
#: flip2d runs (its module fixture).
SLOW_FIRST = ("test_readme.py", "test_resume.py", "test_usercmds.py", "test_adversarial.py",
              "test_cuda_backend.py", "test_tunables.py", "test_inductor_source.py", "test_tasks.py",
              "test_sandbox.py", "test_pipeline.py", "test_import_kernelbench.py", "test_packaging.py",
              "test_coverage.py", "test_cache.py", "test_precision.py")


def _targeted(config) -> bool:
    """True when the command names tests (a file, a node id, -k or -m), not the whole suite."""
    args = list(config.invocation_params.args)
    if any(a.startswith(("-k", "-m")) for a in args):
        return True
    return any(not a.startswith("-") and ("::" in a or os.path.isfile(a)) for a in args)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: 2 processes for the whole suite on a machine with 2 or more cores; 0 (one
    process, no xdist) for a command that names tests, on a GPU (timings must not share the
    device) or with one core. ``-n N`` on the command line overrides it."""
    if os.environ.get("KERNELSYNTH_TEST_GPU") == "1" or (os.cpu_count() or 1) < 2 or _targeted(config):
        return 0
    return 2


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    """Group tests that use the same module- or session-scoped fixture (``xdist_group``: one process builds it
    once), then order the files of SLOW_FIRST first (a stable sort: the order inside a file stays)."""
    parent = {}

    def find(k):
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    shared = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        # a module fixture is built once per module; a session one (defined here) once per process,
        # so its key is where it is defined: the tests of every module that use it form one group
        keys = [(item.module.__name__ if defs[-1].scope == "module" else defs[-1].baseid, name)
                for name, defs in (info.name2fixturedefs.items() if info else ())
                if defs and defs[-1].scope in ("module", "package", "session")
                and getattr(defs[-1], "baseid", "")]  # pytest's and plugins' own fixtures have none
        if keys:
            shared[item] = keys
            for k in keys[1:]:
                parent[find(k)] = find(keys[0])
    for item, keys in shared.items():
        group = find(keys[0])
        item.add_marker(pytest.mark.xdist_group(f"{group[0]}.{group[1]}"))

    def rank(item):
        name = Path(str(item.fspath)).name
        return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)


class GroupCheck:
    """In a pytest-xdist worker with ``--dist loadgroup``: a warning in the run's summary when a
    grouped test's node id carries no group. pytest 9.2's structured node ids ignore the group
    pytest-xdist 3.8 writes into them (pytest-dev/pytest-xdist#1386): every test is then scheduled
    alone and each process builds the shared fixtures again (CI ran so, unnoticed, until session 33;
    pyproject.toml pins pytest < 9.2). The tests still pass; they take longer. A plugin object, not a
    second conftest function: a module holds one ``pytest_collection_modifyitems``."""

    @pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook, which writes the groups into the node ids
    def pytest_collection_modifyitems(self, config, items):
        lost = [item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
        if lost:
            import warnings

            warnings.warn(pytest.PytestWarning(
                f"pytest-xdist's --dist loadgroup did not take: {len(lost)} grouped test(s) have no group in their "
                f"node id (e.g. {lost[0]}), so every test is scheduled alone and shared fixtures are built in each "
                f"process (pytest {pytest.__version__}; pytest-dev/pytest-xdist#1386). The test extra pins pytest<9.2: "
                "pip install -e '.[test]'"))


def pytest_configure(config):
    if hasattr(config, "workerinput") and config.getvalue("loadgroup"):
        config.pluginmanager.register(GroupCheck(), "kernelsynth-group-check")


@pytest.fixture(scope="session")
def readme_runs(tmp_path_factory):
    """The README's commands, each run at most once in the session (tests/test_readme.py, ReadmeRuns):
    tests/test_readme.py runs every one; the fixtures below and tests/test_tunables.py read the runs
    of some of them instead of running the same work again. The Hub they publish to is
    tests/hub_server.py's, up for the session."""
    from hub_server import HubServer
    from test_readme import ReadmeRuns

    with HubServer() as hub:
        yield ReadmeRuns(tmp_path_factory.mktemp("readme"), hub)


def load_run(run_dir):
    """A finished run directory (a run's or a sweep job's) read back as the kernelsynth.engine.RunResult
    its process returned: the spec from its .hydra/config.yaml, the hardware and dataset from its
    run.json, its observations and trajectories from their Parquet files."""
    import dataclasses
    import json

    import pyarrow.parquet as pq
    from omegaconf import OmegaConf

    from kernelsynth import engine
    from kernelsynth.hardware import Hardware
    from kernelsynth.store import verified_rows

    run_dir = Path(run_dir)
    info = json.loads((run_dir / "run.json").read_text())
    hw_fields = {f.name for f in dataclasses.fields(Hardware)}
    observations, events = verified_rows(run_dir)
    assert not events, events
    return engine.RunResult(run_dir=run_dir, spec=engine.load_task(OmegaConf.load(run_dir / ".hydra" / "config.yaml")),
                            hardware=Hardware(**{k: v for k, v in info["hardware"].items() if k in hw_fields}),
                            observations=observations,
                            trajectories=pq.read_table(run_dir / "trajectories.parquet").to_pylist(),
                            dataset_dir=Path(info["dataset_dir"]), wall_s=info["wall_s"], published=info["published"],
                            publish_error=info["publish_error"])


#: The README's sweep of both built-in tasks on the CPU (RULES: float32, 1 trial per shape).
README_CPU_SWEEP = "python -m kernelsynth -m task=flip2d,conv_relu_maxpool hw=cpu hydra.sweep.dir=multirun/cpu"


@pytest.fixture(scope="session")
def conv_interpreter_run(readme_runs):
    """The conv_relu_maxpool job of the README's CPU sweep (README_CPU_SWEEP: the Triton
    interpreter, float32, its interpreter dtype, 1 trial per shape), read back (load_run): shared by
    tests/test_tasks.py's ladder test of the task and tests/test_cuda_backend.py's precision test,
    which ran this run apart before (1 and 2 trials), then together in a run of their own. On a
    2-core machine it is one of the suite's longest runs (95-180 s): now made once, by the README's command."""
    jobs = [d.parent for d in sorted(readme_runs.out_dir(README_CPU_SWEEP).glob("*/.hydra"))]
    [job] = [d for d in jobs if "conv_relu_maxpool" in (d / ".hydra" / "overrides.yaml").read_text()]
    return load_run(job)


@pytest.fixture(scope="session")
def flip2d_cheap_run(readme_runs):
    """The README's main job (``python -m kernelsynth``: flip2d; RULES: hw=cpu, float32, 1 trial per
    shape), read back (load_run): shared by tests/test_tasks.py's ladder test of the task and
    tests/test_usercmds.py's record tests (its ``run``), which ran this same config apart before."""
    return load_run(readme_runs.out_dir("python -m kernelsynth"))


@pytest.fixture
def nvcc_cubin(tmp_path_factory):
    """``build(arch, macros, path, timeout)`` -> (returncode, stderr) of the device-code build the
    harness's NVRTC makes (``nvcc -arch=<arch> -std=c++17 -cubin -x cu -o /dev/null -Xptxas -v -D<m>...
    <path>``: no host pass; ptxas reports the kernel's resources). tests/test_tasks.py compiles every
    build of a task and tests/test_conv_v6_emulation.py and test_conv_v7_emulation.py check ptxas's
    report of some of the same builds: each command is compiled once per session and its result
    kept in the session's temporary folder (keyed by the command and the source's bytes), shared by
    the suite's processes (a lock per key: one compiles, the others wait and read its result)."""
    import fcntl
    import hashlib
    import json
    import subprocess

    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "nvcc-cubin-results"
    folder.mkdir(exist_ok=True)

    def build(arch, macros, path, timeout=300):
        cmd = ["nvcc", f"-arch={arch}", "-std=c++17", "-cubin", "-x", "cu", "-o", "/dev/null", "-Xptxas", "-v",
               *[f"-D{m}" for m in macros], str(path)]
        key = hashlib.sha256("\0".join(cmd).encode() + b"\0" + Path(path).read_bytes()).hexdigest()
        entry = folder / f"{key}.json"
        with open(folder / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not entry.exists():
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
                entry.write_text(json.dumps([r.returncode, r.stderr]))
            return tuple(json.loads(entry.read_text()))

    return build


@pytest.fixture(autouse=True)
def _sigint_not_ignored():
    """Every test starts with Python's SIGINT handler: a child process inherits an ignored SIGINT,
    and a test that interrupts one (Ctrl-C) would then see it run to the end. Seen in the 2-process
    suite: a test earlier in the same process left SIGINT ignored (not found yet)."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture(autouse=True)
def _harness_modes_left_intact():
    """After every test: the harness's dispatch modes as kernelsynth/verify/dynamo_deferral.py keeps
    them (raw until torch._dynamo is imported, torch's wrapper after). A test that runs a cheat in this
    process and restores the modes' raw methods after dynamo was imported (session 22) would make every
    later in-process check of this process report tampering: it fails here, by name, instead."""
    yield
    deferral = sys.modules.get("kernelsynth.verify.dynamo_deferral")
    problems = deferral.intact() if deferral is not None else {}
    assert not problems, f"this test left the harness's dispatch modes changed: {problems}"
