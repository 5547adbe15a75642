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
#: test runs. test_resume.py is one group of four flip2d runs (its module fixture), test_readme.py's
#: commands one test, the longest; test_tunables.py's sweep is a single long test, and
#: test_cuda_backend.py's conv run (conv_interpreter_run) a group with test_tasks.py's conv test.
SLOW_FIRST = ("test_resume.py", "test_usercmds.py", "test_adversarial.py", "test_readme.py",
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


@pytest.fixture(scope="session")
def conv_interpreter_run(tmp_path_factory):
    """One engine run of specs/conv_relu_maxpool on the Triton interpreter (hw=cpu; float32, its
    interpreter dtype; 2 trials per shape), shared by tests/test_tasks.py's ladder test of the task
    and tests/test_cuda_backend.py's precision test, which ran the same run apart (1 and 2 trials:
    each now sees 2). On a 2-core machine it is one of the suite's longest runs (95-140 s)."""
    from kernelsynth import engine

    run_dir = tmp_path_factory.mktemp("conv_interpreter_run")
    cfg = compose(["hw=cpu", "exploration.trials=2", "exploration.progress=false", "task=conv_relu_maxpool",
                   f"cache_dir={run_dir / 'cache'}"])
    return engine.run(cfg, run_dir / "run")


@pytest.fixture(scope="session")
def flip2d_cheap_run(tmp_path_factory):
    """One engine run of specs/flip2d on the Triton interpreter (hw=cpu, float32, 1 trial per
    shape), shared by tests/test_tasks.py's ladder test of the task and tests/test_usercmds.py's
    record tests (its ``run``), which built this same config apart."""
    from kernelsynth import engine

    run_dir = tmp_path_factory.mktemp("flip2d_cheap_run")
    cfg = compose(["hw=cpu", "exploration.trials=1", "exploration.progress=false", "task.dtypes=[float32]",
                   "task=flip2d", f"cache_dir={run_dir / 'cache'}"])
    return engine.run(cfg, run_dir)


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
