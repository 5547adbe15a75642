"""Resume: a run killed in the middle, restarted with the same run directory, skips finished work
and produces the same dataset as an uninterrupted run. Nothing secret reaches the run directory."""

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, listed_copy

# one trial per shape and the listed shapes only (flip2d copied by listed_copy, given by
# task.spec: still the task flip2d): what is resumed is whole observations, whatever their trials
# and shapes (4 runs here; the derived shapes were half of each run's interpreter time)
ARGS = ["hw=cpu", "task=flip2d", "task.dtypes=[float32,bfloat16]", "exploration.trials=1",
        "exploration.progress=false"]
TOKEN = "hf_kernelsynthPlantedSecret0123456789"
SPEC = {}  # "path": the listed copy of specs/flip2d (the module's ``listed_flip2d`` fixture)


@pytest.fixture(scope="module", autouse=True)
def listed_flip2d(tmp_path_factory):
    SPEC["path"] = listed_copy(ROOT / "specs" / "flip2d", tmp_path_factory.mktemp("spec") / "flip2d")
    return SPEC["path"]


def _cmd(run_dir):
    return [sys.executable, "-m", "kernelsynth", *ARGS, f"task.spec={SPEC['path']}", f"hydra.run.dir={run_dir}",
            f"cache_dir={run_dir}/cache"]


def _env():
    return {**os.environ, "HF_TOKEN": TOKEN, "HUGGING_FACE_HUB_TOKEN": TOKEN}


def _records(run_dir):
    import pyarrow.parquet as pq

    rows = pq.read_table(run_dir / "dataset" / "data" / "train-00000-of-00001.parquet").to_pylist()
    for r in rows:
        r["provenance"].pop("date")
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, listed_flip2d):
    run_dir = tmp_path_factory.mktemp("full")
    subprocess.run(_cmd(run_dir), cwd=ROOT, env=_env(), check=True, capture_output=True, timeout=600)
    return run_dir


def _interrupted(run_dir, sig, before):
    """Start the run in ``run_dir``; once it has ``before`` + 2 observation shards, send ``sig``
    (SIGKILL: to the whole process group; SIGINT: as Ctrl-C does) and wait. Returns the shard
    names then on disk: the run stopped part-way, leaving no temporary file."""
    proc = subprocess.Popen(_cmd(run_dir), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    shards = run_dir / "observations"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(shards.glob("*.parquet"))) < before + 2:
        time.sleep(0.2)
    os.killpg(proc.pid, sig) if sig == signal.SIGKILL else proc.send_signal(sig)
    proc.wait(timeout=60)
    done = {p.name for p in shards.glob("*.parquet")}
    assert before + 2 <= len(done) < 10, f"the run should have been interrupted part-way ({sig!r})"
    assert not list(shards.glob(".*.tmp")), f"an interrupted write left a temporary file ({sig!r})"
    return done


def test_interrupted_run_resumes_to_the_same_dataset(uninterrupted, tmp_path):
    """Interrupted by SIGINT, resumed, the resumed run interrupted by SIGKILL, resumed to the end:
    each resumption keeps every shard finished before it (same mtimes) and the dataset is the
    uninterrupted run's. Both signals in one run's work (they were one interrupted run each: a
    flip2d run less for the suite)."""
    run_dir = tmp_path / "run"
    shards = run_dir / "observations"
    done, mtimes = set(), {}
    for sig in (signal.SIGINT, signal.SIGKILL):
        done = _interrupted(run_dir, sig, len(done))
        assert {p.name: p.stat().st_mtime_ns for p in shards.glob("*.parquet") if p.name in mtimes} == mtimes
        mtimes = {p.name: p.stat().st_mtime_ns for p in shards.glob("*.parquet")}

    subprocess.run(_cmd(run_dir), cwd=ROOT, env=_env(), check=True, capture_output=True, timeout=600)
    assert {p.name: p.stat().st_mtime_ns for p in shards.glob("*.parquet") if p.name in done} == mtimes
    assert len(list(shards.glob("*.parquet"))) == 12  # 6 versions (v0-v5) x 2 dtypes
    assert _records(run_dir) == _records(uninterrupted)


def test_the_hub_token_never_reaches_the_run_directory(uninterrupted):
    leaks = [p for p in uninterrupted.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert leaks == []
    assert (uninterrupted / ".hydra" / "config.yaml").is_file()  # the directory was really written


def test_concurrent_runs_in_different_directories_do_not_interfere(uninterrupted, tmp_path):
    """Two runs at once, sharing the cache directory, each produce the uninterrupted dataset."""
    dirs = [tmp_path / "a", tmp_path / "b"]
    procs = [subprocess.Popen(_cmd(d)[:-1] + [f"cache_dir={tmp_path / 'shared_cache'}"], cwd=ROOT, env=_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for d in dirs]
    for p in procs:
        assert p.wait(timeout=600) == 0, p.stderr.read()
    for d in dirs:
        assert _records(d) == _records(uninterrupted)
