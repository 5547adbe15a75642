"""The Ray launcher (conf/hydra/launcher/ray_cluster.yaml, issue 17 item 2) on a local Ray instance.

``hydra.launcher.ray.init.address`` is null in the config, so ray.init starts a local Ray
instance in the submitting process (as on a laptop or one node); each sweep point is a Ray task
that runs one kernelsynth job, and the sweep merges into one dataset (kernelsynth/merge.py). On
this CPU machine the task asks for no GPU (``remote.num_gpus=0``: with the config's 1 Ray would
wait for a GPU forever) and the dashboard is off (it starts a web server the test does not need).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT, listed_copy
CHEAP = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "task.dtypes=[float32]"]

pytestmark = pytest.mark.xdist_group("ray")
ray = pytest.importorskip("ray", reason="hydra-ray-launcher is in the test extra: pip install -e '.[test]'")


def test_a_ray_sweep_runs_each_job_as_a_ray_task_and_merges_one_dataset(tmp_path):
    import datasets

    sweep = tmp_path / "sweep"
    # flip2d on its listed shapes (conftest.listed_copy, still the task flip2d): the launcher is tested
    flip = listed_copy(ROOT / "specs" / "flip2d", tmp_path / "listed" / "flip2d")
    ray_tmp = tempfile.mkdtemp(prefix="ks-ray-", dir="/tmp")  # short: Ray's unix socket paths must fit 107 bytes
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "RAY_ADDRESS")}
    env |= {"HF_HOME": str(tmp_path / "hf_home"), "HF_DATASETS_CACHE": str(tmp_path / "hf_datasets"),
            "RAY_DEDUP_LOGS": "0", "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-m", "kernelsynth", "-m", "hydra/launcher=ray_cluster",
                        "hydra.launcher.ray.remote.num_gpus=0", "hydra.launcher.ray.remote.num_cpus=1",
                        "+hydra.launcher.ray.init.include_dashboard=false", "+hydra.launcher.ray.init.num_cpus=2",
                        f"+hydra.launcher.ray.init._temp_dir={ray_tmp}", *CHEAP, "task=flip2d",
                        f"task.spec={flip}", "task.tunables.BLOCK_N=128,256", "task.tunables.num_warps=4",
                        f"hydra.sweep.dir={sweep}", f"cache_dir={tmp_path / 'cache'}"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    shutil.rmtree(ray_tmp, ignore_errors=True)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-3000:])
    log = p.stdout + p.stderr
    assert "Ray Launcher is launching 2 jobs" in log and "Started a local Ray instance" in log, log[-3000:]
    assert "merged 2 job(s)" in p.stdout, p.stdout[-2000:]
    # each job ran in a Ray worker process (its log lines are prefixed with the remote function's pid)
    assert "(_run_job pid=" in log
    for job in ("0", "1"):
        assert "RayLauncher" in (sweep / job / ".hydra" / "hydra.yaml").read_text()
        assert (sweep / job / "observations.parquet").is_file()
    ds = datasets.load_dataset(str(sweep / "dataset"), "flip2d")
    assert list(ds) == ["cpu"] and ds["cpu"].num_rows == 1
    # the merged observations hold both jobs' BLOCK_N values, every one verified
    import pyarrow.parquet as pq

    rows = pq.read_table(sweep / "observations.parquet").to_pylist()
    assert {json.loads(r["config"])["BLOCK_N"] for r in rows if r["role"] != "baseline"} == {128, 256}
    assert all(r["verdict"] == "accepted" for r in rows), [(r["version"], r["reason"]) for r in rows]
