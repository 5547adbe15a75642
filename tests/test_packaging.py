"""kernelsynth installs like a package: a wheel built from the source tree carries conf/ and
specs/ (as kernelsynth/conf, kernelsynth/specs), and installed into a fresh virtual environment
it runs the CPU main job from another directory, with nothing of the source tree in reach
(issue 11, item 4). The environment shares this one's site-packages (--system-site-packages),
so torch is not downloaded again; the wheel's own copy of kernelsynth shadows any other."""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

#: what a source tree holds that is not source (a stale build/ would leak old files into a wheel)
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "outputs", "multirun", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".whl", ".venv*")


def _run(cmd, cwd, env=None, timeout=600):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-4000:])
    return p


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_runs_the_cpu_main_job_elsewhere(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)
    wheels = tmp_path / "wheels"
    # no build isolation: setuptools comes from this environment (CI has no index to fetch it from)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(src)],
         cwd=tmp_path)
    [wheel] = wheels.glob("kernelsynth-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for f in ("kernelsynth/conf/config.yaml", "kernelsynth/conf/hw/h200.yaml", "kernelsynth/specs/flip2d/spec.yaml",
              "kernelsynth/specs/_data_movement.yaml", "kernelsynth/specs/conv_relu_maxpool/kernels/v1_naive_fused.cu",
              "hydra_plugins/kernelsynth_tasks/task_source.py", "kernelsynth/tools.py"):
        assert f in names, f
    assert not [n for n in names if "__pycache__" in n or n.startswith("kernelsynth/conf/task/")]

    venv = tmp_path / "venv"
    # pip >= 22.3 installs into another interpreter (--python), so the venv needs no ensurepip;
    # an older pip uses the venv's own bundled pip
    import pip

    outer = tuple(int(x) for x in pip.__version__.split(".")[:2]) >= (22, 3)
    _run([sys.executable, "-m", "venv", "--system-site-packages", *(["--without-pip"] if outer else []), str(venv)],
         cwd=tmp_path)
    py, bindir = venv / "bin" / "python", venv / "bin"
    installer = [sys.executable, "-m", "pip", "--python", str(py)] if outer else [str(py), "-m", "pip"]
    # --ignore-installed: a kernelsynth of the same version in the shared site-packages (the editable
    # install of this checkout) would otherwise count as already installed
    _run(installer + ["install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)], cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET", "KERNELSYNTH_SPECS")}
    site = _run([str(py), "-c", "import kernelsynth.paths as p; print(p.CONF_DIR); print(p.SPECS_DIR)"],
                cwd=elsewhere, env=env).stdout.split()
    assert all(str(venv) in s and "site-packages" in s for s in site), site

    listing = _run([str(bindir / "kernelsynth-tools"), "tasks"], cwd=elsewhere, env=env).stdout
    assert "flip2d" in listing and "conv_relu_maxpool" in listing and str(venv) in listing

    run_dir = elsewhere / "run"
    p = _run([str(py), "-m", "kernelsynth", "hw=cpu", "task.dtypes=[float32]", "exploration.trials=1",
              "exploration.progress=false", f"hydra.run.dir={run_dir}", f"cache_dir={tmp_path / 'cache'}"],
             cwd=elsewhere, env=env)
    assert "1 record(s)" in p.stdout, p.stdout[-2000:]
    log = (run_dir / "cli.log").read_text()
    assert f"from {venv}" in log and "site-packages/kernelsynth/specs/flip2d/spec.yaml" in log, log[:2000]
    assert (run_dir / "dataset" / "data" / "train-00000-of-00001.parquet").is_file()

    # `pip install .` (not editable) from a source folder: the same build; installed into a folder of its
    # own by this environment's pip (the venv's bundled setuptools may be too old to build)
    target = tmp_path / "target"
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--ignore-installed",
          "--target", str(target), str(src)], cwd=elsewhere, env=env)
    listing = _run([sys.executable, "-m", "kernelsynth.tools", "tasks"], cwd=elsewhere,
                   env=dict(env, PYTHONPATH=str(target))).stdout
    assert "flip2d" in listing and str(target / "kernelsynth" / "specs") in listing
