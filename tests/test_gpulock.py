"""kernelsynth/gpulock.py: a timed region holds its GPU's lock exclusive, other GPU jobs shared."""

import fcntl
import os
import stat
import subprocess
import sys
import time


from kernelsynth import gpulock


def _free(path, mode):
    """Whether another open file description could take the lock in ``mode`` right now."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if mode == gpulock.EXCLUSIVE else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_prepare_makes_world_readable_files_per_uuid(tmp_path):
    paths = gpulock.prepare(tmp_path, ["GPU-1a2b/../x", None, "5d1c-77"])
    assert [p.name for p in paths] == ["GPU-1a2b____x.lock", "5d1c-77.lock"]
    assert all(p.parent == tmp_path / "gpu-locks" for p in paths)
    assert stat.S_IMODE(paths[0].stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "gpu-locks").stat().st_mode) == 0o755
    assert gpulock.prepare(tmp_path, ["5d1c-77"]) == [paths[1]]  # again: the same file


def test_evaluate_job_is_shared_and_its_timed_region_exclusive(tmp_path):
    path, = gpulock.prepare(tmp_path, ["gpu0"])
    with gpulock.job("evaluate", path_of=lambda: path) as lock:
        assert lock.active and lock.mode == gpulock.SHARED
        assert _free(path, gpulock.SHARED) and not _free(path, gpulock.EXCLUSIVE)  # verification beside others
        with gpulock.exclusive():
            assert not _free(path, gpulock.SHARED)  # the timed region: nobody else's GPU job
        assert lock.mode == gpulock.SHARED and _free(path, gpulock.SHARED) and not _free(path, gpulock.EXCLUSIVE)
    assert _free(path, gpulock.EXCLUSIVE)  # released with the job
    with gpulock.job("ceilings", path_of=lambda: path):
        assert not _free(path, gpulock.SHARED)
    with gpulock.job("probe", path_of=lambda: path) as lock:  # no lock: runs before prepare
        assert lock is None and _free(path, gpulock.EXCLUSIVE)
        with gpulock.exclusive():
            assert _free(path, gpulock.EXCLUSIVE)


def test_a_lock_that_was_held_still_says_so_after_its_job(tmp_path):
    """The worker reads JobResult.gpu_lock after the job's ``with`` block, when the lock is closed:
    it read ``active`` (False after close), so every GPU job of the H200 runs was reported as run
    without its lock (sessions 10-11)."""
    [path] = gpulock.prepare(tmp_path, ["GPU-test"])
    with gpulock.job("evaluate", path_of=lambda: path) as lock:
        assert lock.active and lock.opened
    assert not lock.active and lock.opened and lock.error is None
    with gpulock.job("evaluate", path_of=lambda: tmp_path / "none.lock") as missing:
        pass
    assert not missing.opened and missing.error


def test_missing_file_locks_nothing_and_says_so(tmp_path, capsys):
    with gpulock.job("evaluate", path_of=lambda: tmp_path / "none.lock") as lock:
        assert not lock.active
        assert "cannot open" in capsys.readouterr().err
        assert lock.path is not None  # the worker reports it: JobResult.gpu_lock False, a warning of the run
        # with its reason (session 11: the H200 runs said only "could not be opened")
        assert str(tmp_path / "none.lock") in lock.error and "errno 2" in lock.error
        with gpulock.exclusive():
            pass
    with gpulock.job("evaluate", path_of=lambda: None) as lock:
        assert not lock.active


def test_timed_region_waits_for_another_process_gpu_job(tmp_path):
    """Another process's shared job (verification of another run) delays the exclusive region
    until it ends: the timing never overlaps it."""
    path, = gpulock.prepare(tmp_path, ["gpu0"])
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from kernelsynth import gpulock\n"
        f"with gpulock.job('oracle', path_of=lambda: Path({str(path)!r})):\n"
        "    print('held', flush=True); time.sleep(0.6); print(time.time(), flush=True)\n")],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert holder.stdout.readline().strip() == "held"
    start = time.monotonic()
    with gpulock.job("evaluate", path_of=lambda: path):  # shared: granted beside the holder
        assert time.monotonic() - start < 0.3
        with gpulock.exclusive():
            waited, entered = time.monotonic() - start, time.time()
    holder.wait(5)
    assert waited >= 0.3 and entered >= float(holder.stdout.readline())  # after the other job's work ended


def test_job_modes_name_worker_jobs():
    from kernelsynth import jobs
    assert all(callable(getattr(jobs, name)) for name in gpulock.JOB_MODES)
    assert "probe" not in gpulock.JOB_MODES and "profile" not in gpulock.JOB_MODES


def test_waiting_timing_goes_before_new_shared_jobs(tmp_path):
    """While a timed region waits for a running shared job, a new shared job waits behind it
    (the turnstile): overlapping verifications of other runs cannot keep a timing waiting."""
    path, = gpulock.prepare(tmp_path, ["gpu0"])
    running = gpulock.GpuLock(path)
    running.hold(gpulock.SHARED)
    code = ("import sys, time; from pathlib import Path; from kernelsynth import gpulock\n"
            f"lock = gpulock.GpuLock(Path({str(path)!r})); lock.hold(sys.argv[1]); print(sys.argv[1], time.time(), flush=True)\n"
            "time.sleep(0.3); lock.close()\n")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    timing = subprocess.Popen([sys.executable, "-c", code, gpulock.EXCLUSIVE], stdout=subprocess.PIPE, text=True, env=env)
    turn = str(path) + ".turn"
    deadline = time.monotonic() + 10
    while _free(turn, gpulock.SHARED) and time.monotonic() < deadline:  # the timing is waiting at the turnstile
        time.sleep(0.02)
    newcomer = subprocess.Popen([sys.executable, "-c", code, gpulock.SHARED], stdout=subprocess.PIPE, text=True, env=env)
    time.sleep(0.5)
    assert timing.poll() is None and newcomer.poll() is None  # both wait: the newcomer behind the timing
    running.close()
    t_ex = float(timing.stdout.readline().split()[1])
    t_sh = float(newcomer.stdout.readline().split()[1])
    timing.wait(5), newcomer.wait(5)
    assert t_sh >= t_ex + 0.25  # the new shared job started after the timed region ended



def test_inductor_extraction_runs_its_compiled_code_under_the_lock(tmp_path):
    """The extraction job is ``open``: it holds the lock shared around its GPU work only
    (inductor_extract.extract: the reference, the compiled code's calls, the file's check), not
    during inductor's compile (tens of seconds that would stall every other run's timing)."""
    from kernelsynth.inductor_extract import gpu_locked

    path, = gpulock.prepare(tmp_path, ["gpu0"])
    seen = []

    def compiled(args):
        seen.append(_free(path, gpulock.EXCLUSIVE))
        return [a * 2 for a in args]
    compiled._boxed_call = True
    run = gpu_locked(compiled)
    assert run._boxed_call and run([1, 2]) == [2, 4] and seen == [True]  # outside a job: no lock
    with gpulock.job("inductor", path_of=lambda: path) as lock:
        assert lock.active and lock.mode is None and _free(path, gpulock.EXCLUSIVE)  # compiling: not held
        assert run([3]) == [6] and seen[-1] is False and lock.mode is None  # held during the call only
        with gpulock.shared():
            assert not _free(path, gpulock.EXCLUSIVE) and _free(path, gpulock.SHARED)
        assert _free(path, gpulock.EXCLUSIVE)


def test_a_pinned_worker_finds_its_lock_before_cuda_starts(tmp_path, monkeypatch):
    """Session 12: side-by-side runs on one H200 rejected honest kernels by rule 17 (event-timed 2.1
    ms, 5.3 ms with a full device sync) while other runs started workers: a worker created its CUDA
    context (torch.cuda.get_device_properties, to read the UUID) before it took the lock. A pinned
    worker now gets the UUID from the parent (devices.Device.env) and names its lock file without
    touching CUDA (here, without a GPU at all: the old path returned None)."""
    from kernelsynth.devices import Device

    env = Device(index=0, visible="0", fingerprint="f" * 16, uuid="GPU-1234-abcd").env()
    assert env == {"CUDA_VISIBLE_DEVICES": "0", "KERNELSYNTH_GPU_UUID": "GPU-1234-abcd"}
    assert Device(index=0, visible="0", fingerprint="f" * 16).env() == {"CUDA_VISIBLE_DEVICES": "0"}
    monkeypatch.setenv("KERNELSYNTH_CACHE", str(tmp_path))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv(gpulock.UUID_ENV, env["KERNELSYNTH_GPU_UUID"])
    import torch

    def no_cuda(*a, **k):
        raise AssertionError("CUDA touched before the lock")

    monkeypatch.setattr(torch.cuda, "get_device_properties", no_cuda)
    monkeypatch.setattr(torch.cuda, "is_available", no_cuda)
    path = gpulock.worker_lock_path()
    assert path == gpulock.lock_path(tmp_path, "GPU-1234-abcd") and path.name == "GPU-1234-abcd.lock"
    (made,) = gpulock.prepare(tmp_path, ["GPU-1234-abcd"])
    assert made == path
