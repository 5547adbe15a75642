"""Containment (SECURITY.md): attacks of tests/adversarial/sandbox run through the real
sandbox (bubblewrap) as spec candidates and as an external candidate; the scrubbed environment;
authenticated observation files; the run without a sandbox.

Without bubblewrap these tests fail (CI installs it in .ci/run); KERNELSYNTH_ALLOW_NO_SANDBOX=1
skips the ones that need it, for a machine that cannot have it.
"""

import json
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, compose
from kernelsynth import engine
from kernelsynth.errors import UserError
from kernelsynth.sandbox import Sandbox, SandboxSettings, worker_environment
from kernelsynth.store import ObservationStore, verified_rows
from kernelsynth.workers import WorkerPool, classify

ATTACKS = ROOT / "tests" / "adversarial" / "sandbox"
REFERENCE = ROOT / "specs" / "flip2d" / "reference.py"
PLANTED = "hf_plantedTOKENkernelsynth0123456789"
MARK = "kernelsynth-adversarial-outlive"
#: attacks run as external candidates only (tests/test_cache.py), not in the spec-candidate run below
EXTERNAL_ONLY = {"poison_cache"}
RUN = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.workers=2",
       "exploration.fresh_worker=always", "exploration.screen_sources=false", "exploration.sandbox.mode=on",
       "exploration.sandbox.nproc=128", "exploration.sandbox.fsize_mb=8", "exploration.sandbox.tmp_mb=96",
       "exploration.timeout_s=240"]


def _sandbox_or_skip():
    box = Sandbox(SandboxSettings(mode="auto"))
    if not box.active:
        if os.environ.get("KERNELSYNTH_ALLOW_NO_SANDBOX") == "1":
            pytest.skip(f"no sandbox here and KERNELSYNTH_ALLOW_NO_SANDBOX=1: {box.problem}")
        pytest.fail(f"the sandbox cannot start ({box.problem}); install bubblewrap, or set "
                    "KERNELSYNTH_ALLOW_NO_SANDBOX=1 to skip these tests on a machine that cannot have it")
    return box


def _marked_processes(mark: str = MARK):
    """Processes on this machine whose command line carries ``mark`` (the outlive attack's by
    default). Each test plants its own mark: the suite runs tests in 2 processes, and one test's
    attack processes, alive until its own job ends, must not count against another's (CI, session
    17: the detached-external test saw the outlive attack's two processes of a concurrent run)."""
    out = []
    for cmd in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if mark in cmd.read_bytes().decode(errors="replace") and int(cmd.parent.name) != os.getpid():
                out.append(int(cmd.parent.name))
        except OSError:
            pass
    return out


def _spec(folder: Path, versions):
    lines = [f"name: sandbox_flip\ncategory: test_fixture\nreference: {REFERENCE}\ndims: [M, N]\n"
             "shapes:\n  verify: [[3, 5], [4, 67]]\ndtypes: [float32]\ncomparison: exact\n"
             "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\n"
             "reference_ops: [flip]\ncandidates:"]
    for v in versions:
        lines.append(f"  - {{version: {v}, name: {v}, file: {v}.py, technique: attack, rationale: attack}}")
    (folder / "spec.yaml").write_text("\n".join(lines) + "\n")


class _Listener:
    """A TCP listener on 127.0.0.1 that records what it receives."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port, self.received = self.sock.getsockname()[1], []
        self.sock.settimeout(0.5)
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                self.received.append(conn.recv(100))

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.sock.close()


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """One engine run of every attack as a spec candidate, with credentials planted in the
    environment and a token file, and a listener on a local port: (observations by version,
    run dir, repo file the attack aimed at, listener, planted file)."""
    _sandbox_or_skip()
    work = tmp_path_factory.mktemp("attacks")
    os.chmod(work, 0o755)  # readable by the workers' own uids (else they keep uid 0, and RLIMIT_NPROC is moot)
    run_dir = work / "run"
    repo_target = ROOT / "pwned_by_candidate"
    home_target = Path.home() / "pwned_by_candidate"
    listener = _Listener()
    planted = Path(f"/var/tmp/kernelsynth-planted-{os.getpid()}")
    planted.mkdir(exist_ok=True)
    (planted / "token").write_text(PLANTED)
    os.chmod(planted / "token", 0o600)
    saved = dict(os.environ)
    os.environ.update(HF_TOKEN=PLANTED, HF_HOME=str(planted), AWS_SECRET_ACCESS_KEY=PLANTED,
                      GITHUB_TOKEN=PLANTED, TRITON_SECRET_KEY=PLANTED)
    versions = [p.stem for p in sorted(ATTACKS.glob("*.py")) if p.stem not in EXTERNAL_ONLY]
    for v in versions:
        src = (ATTACKS / f"{v}.py").read_text()
        src = src.replace("PORT = 0 ", f"PORT = {listener.port} ").replace(
            "TARGETS = []", f"TARGETS = {[str(run_dir / 'pwned'), str(repo_target), str(home_target)]!r}").replace(
            'RUN_DIR = ""', f"RUN_DIR = {str(run_dir)!r}")
        (work / f"{v}.py").write_text(src)
    _spec(work, versions)
    try:
        start = time.monotonic()
        res = engine.run(compose(RUN + [f"task.spec={work / 'spec.yaml'}"]), run_dir)
        wall = time.monotonic() - start
    finally:
        os.environ.clear()
        os.environ.update(saved)
        listener.close()
    yield {o["version"]: o for o in res.observations}, run_dir, repo_target, home_target, listener, planted, wall
    shutil.rmtree(planted, ignore_errors=True)
    for t in (repo_target, home_target):
        t.unlink(missing_ok=True)


def _reason(o):
    return o["reason"] or ""


def test_credentials_in_env_and_token_files_are_not_visible_to_a_candidate(attacked):
    obs = attacked[0]
    o = obs["steal_credentials"]
    assert o["verdict"] == "accepted", _reason(o)[:500]  # it raises "stole: ..." on anything it finds
    # the same file, imported by a plain child of this process with the planted variables, finds them
    env = dict(os.environ, HF_TOKEN=PLANTED, HF_HOME=str(attacked[5]))
    p = subprocess.run([sys.executable, "-c", f"import runpy; print(runpy.run_path({str(ATTACKS / 'steal_credentials.py')!r})"
                        "['FOUND'])"], capture_output=True, text=True, env=env, timeout=120)
    assert PLANTED in p.stdout and "HF_TOKEN" in p.stdout, p.stdout + p.stderr


def test_connect_to_a_local_port_is_a_sandbox_fault_and_sends_nothing(attacked):
    o, listener = attacked[0]["connect_local"], attacked[4]
    assert (o["verdict"], o["fault"]) == ("rejected", "sandbox"), _reason(o)[:500]
    assert re.search(r"Connection refused|Network is unreachable", _reason(o)), _reason(o)[:500]
    assert listener.received == []
    # the listener works: an unsandboxed connection reaches it
    probe = _Listener()
    with socket.create_connection(("127.0.0.1", probe.port), timeout=5) as s:
        s.sendall(b"hello")
    time.sleep(1)
    probe.close()
    assert probe.received == [b"hello"]


def test_writes_into_the_run_dir_repo_and_home_are_denied(attacked):
    o, run_dir, repo_target, home_target = attacked[0]["write_outside"], *attacked[1:4]
    assert (o["verdict"], o["fault"]) == ("rejected", "sandbox"), _reason(o)[:500]
    assert re.search(r"Read-only file system|Permission denied", _reason(o)), _reason(o)[:500]
    assert not (run_dir / "pwned").exists() and not repo_target.exists() and not home_target.exists()


def test_processes_that_outlive_their_job_are_killed_and_reject_it(attacked):
    o = attacked[0]["outlive_job"]
    assert (o["verdict"], o["fault"]) == ("rejected", "sandbox"), _reason(o)[:500]
    assert re.search(r"left \d+ process\(es\) running after its job", _reason(o)), _reason(o)[:500]
    assert _marked_processes() == []


def test_a_fork_bomb_is_stopped_by_the_process_limit(attacked):
    o = attacked[0]["fork_bomb"]
    assert (o["verdict"], o["fault"]) == ("rejected", "sandbox"), _reason(o)[:500]
    assert "Resource temporarily unavailable" in _reason(o), _reason(o)[:500]


def test_filling_the_disk_stops_at_the_file_size_and_scratch_limits(attacked):
    big, many = attacked[0]["fill_disk"], attacked[0]["fill_scratch"]
    assert (big["verdict"], big["fault"]) == ("rejected", "sandbox"), _reason(big)[:500]
    assert "File too large" in _reason(big), _reason(big)[:500]
    assert (many["verdict"], many["fault"]) == ("rejected", "sandbox"), _reason(many)[:500]
    assert "No space left on device" in _reason(many), _reason(many)[:500]


def test_rewriting_other_candidates_results_is_denied_and_every_file_checks(attacked):
    obs, run_dir = attacked[0], attacked[1]
    o = obs["forge_result"]
    assert (o["verdict"], o["fault"]) == ("rejected", "sandbox"), _reason(o)[:500]
    rows, events = verified_rows(run_dir)
    assert events == [] and len(rows) == len(obs)
    assert json.loads((run_dir / "run.json").read_text())["integrity_events"] == []


def test_a_forged_pickle_sent_to_the_parent_is_not_loaded(attacked):
    o, run_dir = attacked[0]["pickle_parent"], attacked[1]
    assert (o["verdict"], o["fault"]) == ("rejected", "tampering"), _reason(o)[:500]
    assert "names posix.system, which the parent does not unpickle" in _reason(o), _reason(o)[:500]
    assert not (run_dir / "pwned_by_pickle").exists()


def test_the_attack_run_says_it_was_sandboxed_and_took_bounded_time(attacked):
    run = json.loads((attacked[1] / "run.json").read_text())
    assert run["sandbox"]["active"] is True and run["sandbox"]["status"].startswith("sandbox: bubblewrap")
    assert attacked[6] < 600  # the fork bomb and the disk fillers end at their limits, not at the timeout


def test_external_candidate_that_detaches_to_forge_its_result_is_contained(tmp_path):
    """The issue's attack: an external candidate returning zeros that, at import, starts a
    detached process meant to rewrite its own observation to "accepted" later."""
    _sandbox_or_skip()
    mark = f"kernelsynth-adversarial-detached-{uuid.uuid4().hex}"  # not MARK: see _marked_processes
    cand = tmp_path / "zeros_detached.py"
    cand.write_text(
        "import subprocess, sys, torch\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)  # {mark}'], start_new_session=True)\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def __init__(self, **kw): super().__init__()\n"
        "    def forward(self, x): return torch.zeros_like(x)\n")
    os.chmod(tmp_path, 0o755)  # readable by the workers' own uid (a sandbox at uid 0 refuses externals)
    os.chmod(cand, 0o644)
    run_dir = tmp_path / "run"
    spec = tmp_path / "spec"
    spec.mkdir()
    _spec(spec, [])
    (spec / "spec.yaml").write_text((spec / "spec.yaml").read_text().replace(
        "candidates:", "candidates:\n  - {version: v0, name: honest, file: "
        f"{ROOT / 'tests' / 'adversarial' / 'cpu' / 'honest' / 'index.py'}, technique: index, rationale: honest}}"))
    res = engine.run(compose(RUN + [f"task.spec={spec / 'spec.yaml'}", f"exploration.extra_candidates=[{cand}]"]), run_dir)
    ext = [o for o in res.observations if o["role"] == "external"]
    assert len(ext) == 1 and ext[0]["verdict"] == "rejected", ext
    assert ext[0]["fault"] in ("wrong_output", "sandbox"), _reason(ext[0])[:300]
    assert _marked_processes(mark) == []
    assert pq.read_table(run_dir / "observations.parquet").to_pydict()["verdict"].count("accepted") == 1


# ------------------------------------------------------------------------------------ no sandbox
def test_scrubbed_environment_keeps_device_and_triton_settings_and_drops_credentials():
    parent = {"HF_TOKEN": PLANTED, "HF_HOME": "/x/hf", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b",
              "GITHUB_TOKEN": "c", "OPENAI_API_KEY": "d", "CI_JOB_TOKEN": "e", "GOOGLE_APPLICATION_CREDENTIALS": "/k",
              "TRITON_CACHE_DIR": "/c/triton", "TRITON_API_TOKEN": "f", "CUDA_VISIBLE_DEVICES": "3",
              "PATH": "/usr/bin", "LANG": "C.UTF-8", "HOME": "/root", "SSH_AUTH_SOCK": "/s", "GITHUB_ACTIONS": "true",
              "NVIDIA_VISIBLE_DEVICES": "all", "LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}
    env = worker_environment(parent, {"TRITON_INTERPRET": "1"}, "/tmp/home")
    assert env["HOME"] == "/tmp/home" and env["TRITON_INTERPRET"] == "1"
    for k in ("TRITON_CACHE_DIR", "CUDA_VISIBLE_DEVICES", "PATH", "LANG", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"):
        assert env[k] == parent[k], k
    for k in ("HF_TOKEN", "HF_HOME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY",
              "CI_JOB_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "TRITON_API_TOKEN", "SSH_AUTH_SOCK", "GITHUB_ACTIONS"):
        assert k not in env, k
    assert PLANTED not in json.dumps(env)


def test_unsandboxed_worker_gets_the_scrubbed_environment_too(monkeypatch):
    """Also: a replaced worker whose slot has no job left is not restarted (nor a spare started):
    each start imports torch, and one started after the last job would only be closed. The next
    job starts it."""
    import kernelsynth.workers as workers

    started = []

    class Counted(workers._Worker):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            started.append(self)

    monkeypatch.setattr(workers, "_Worker", Counted)
    monkeypatch.setenv("HF_TOKEN", PLANTED)
    with WorkerPool(1, env={"TRITON_INTERPRET": "1"}, sandbox=Sandbox(SandboxSettings(mode="off"))) as pool:
        assert not pool.sandbox.active and pool.sandbox.status.startswith("sandbox: NONE")
        [(_, res)] = list(pool.map("probe", [{"reference": None}], recycle=lambda i, r: True))
        assert res.ok, res.error
        assert len(started) == 1 and pool._workers == [None] and pool._spares == {}
        assert not started[0].proc.is_alive()  # the recycled worker was killed
        again = pool.run("probe", {"reference": None})  # the empty slot starts a fresh worker for it
        assert again.ok, again.error
        assert len(started) == 2 and pool._workers == [started[1]]


def test_classify_names_containment_denials_sandbox():
    import errno

    for e in (OSError(errno.EROFS, "Read-only file system"), PermissionError(errno.EACCES, "Permission denied"),
              OSError(errno.ENETUNREACH, "Network is unreachable"),
              ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), OSError(errno.EFBIG, "File too large"),
              BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"), OSError(errno.ENOSPC, "No space"),
              socket.gaierror(-3, "Temporary failure in name resolution")):
        assert classify(e) == "sandbox", e
    try:
        try:
            raise OSError(errno.EROFS, "Read-only file system")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert classify(outer) == "sandbox"
    assert classify(FileNotFoundError(errno.ENOENT, "x")) == "exception"
    assert classify(ValueError("x")) == "exception"


def test_mode_on_without_bwrap_refuses_and_mode_off_is_said(tmp_path):
    with pytest.raises(UserError, match="sandbox.mode=on but the sandbox cannot start"):
        Sandbox(SandboxSettings(mode="on", bwrap=str(tmp_path / "no-bwrap")))
    off = Sandbox(SandboxSettings(mode="off"))
    assert not off.active and "exploration.sandbox.mode=off" in off.status
    assert off.command(["python"], off.limits()) == ["python"]


def test_external_candidates_refuse_to_run_unsandboxed_unless_asked(tmp_path):
    cand = ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py"
    spec = tmp_path / "spec"
    spec.mkdir()
    _spec(spec, [])
    (spec / "spec.yaml").write_text((spec / "spec.yaml").read_text().replace(
        "candidates:", f"candidates:\n  - {{version: v0, name: honest, file: {cand}, technique: index, rationale: honest}}"))
    off = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.sandbox.mode=off",
           f"task.spec={spec / 'spec.yaml'}", f"exploration.extra_candidates=[{cand}]"]
    with pytest.raises(UserError, match="refusing to run external candidates without the sandbox"):
        engine.run(compose(off), tmp_path / "refused")
    res = engine.run(compose(off + ["exploration.sandbox.allow_unsandboxed_external=true"]), tmp_path / "run")
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["sandbox"]["active"] is False and run["sandbox"]["status"].startswith("sandbox: NONE")
    assert {o["role"]: o["verdict"] for o in res.observations} == {"candidate": "accepted", "external": "accepted"}


# ------------------------------------------------------------------------------------ HMAC
def _row(key, verdict="accepted"):
    return {"key": key, "task": "t", "spec_sha256": "s", "role": "candidate", "version": "v0", "name": "n",
            "backend": "triton", "config": "{}", "dtype": "float32", "verdict": verdict, "fault": "ok", "reason": ""}


def test_observation_files_that_fail_their_tag_are_set_aside_and_recorded(tmp_path):
    store = ObservationStore(tmp_path)
    store.append(_row("aaa", "accepted"))
    store.append(_row("bbb", "rejected"))
    assert oct(os.stat(tmp_path / ".observation-key").st_mode & 0o777) == "0o600"
    assert [r["key"] for r in store.read()] == ["aaa", "bbb"] and store.events == []
    # forged: rewritten by something without the key (valid Parquet, schema and name)
    from kernelsynth.store import OBSERVATION_SCHEMA, atomic_write_table, rows_to_table

    atomic_write_table(tmp_path / "observations" / "bbb.parquet", rows_to_table([_row("bbb", "accepted")], OBSERVATION_SCHEMA))
    # copied: another run's honest file under this name
    shutil.copy(tmp_path / "observations" / "aaa.parquet", tmp_path / "observations" / "ccc.parquet")
    (tmp_path / "observations" / "ddd.parquet").write_bytes(b"PAR1 accepted")
    fresh = ObservationStore(tmp_path)  # a resumed run: the key comes from the run directory
    events = fresh.verify()
    assert sorted(Path(e["file"]).name for e in events) == ["bbb.parquet", "ccc.parquet", "ddd.parquet"]
    why = {Path(e["file"]).name: e["problem"] for e in events}
    # the tag covers the file's name: a copy under another name does not check either
    assert why["bbb.parquet"] == "no authentication tag" and "does not match" in why["ccc.parquet"]
    assert "unreadable" in why["ddd.parquet"]
    assert [r["key"] for r in fresh.read()] == ["aaa"]
    assert len(list((tmp_path / "observations" / "untrusted").iterdir())) == 3
    other = tmp_path / "other"
    ObservationStore(other).append(_row("eee"))
    (other / ".observation-key").write_text("00" * 32)  # a merge with the wrong key trusts nothing
    rows, events = verified_rows(other)
    assert rows == [] and "does not match" in events[0]["problem"]


def test_reports_read_an_interrupted_run_from_its_observation_files(tmp_path):
    """bench/*.py reports (store.run_rows): an H200 run stopped by its time limit has no
    observations.parquet; its per-observation files are what it measured (seen in session 7)."""
    from kernelsynth.store import run_rows

    with pytest.raises(FileNotFoundError, match="no observations.parquet"):
        run_rows(tmp_path)
    store = ObservationStore(tmp_path)
    store.append(_row("aaa", "accepted"))
    store.append(_row("bbb", "rejected"))
    assert sorted((r["key"], r["verdict"]) for r in run_rows(tmp_path)) == [("aaa", "accepted"), ("bbb", "rejected")]
    store.write_consolidated([_row("aaa", "accepted")])  # a finished run: its consolidated table
    assert [r["key"] for r in run_rows(tmp_path)] == ["aaa"]


def test_forged_observation_is_re_run_at_resume_and_recorded_in_run_json(tmp_path):
    spec = tmp_path / "spec"
    spec.mkdir()
    _spec(spec, [])
    zeros = tmp_path / "zeros.py"
    zeros.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self, **kw): super().__init__()\n"
                     "    def forward(self, x): return torch.zeros_like(x)\n")
    (spec / "spec.yaml").write_text((spec / "spec.yaml").read_text().replace(
        "candidates:", f"candidates:\n  - {{version: v0, name: zeros, file: {zeros}, technique: zeros, rationale: wrong}}"))
    os.chmod(zeros, 0o600)  # as root: these jobs' workers keep uid 0, the probe's do not (sandbox_s7 uid_claim)
    overrides = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", f"task.spec={spec / 'spec.yaml'}"]
    run_dir = tmp_path / "run"
    first = engine.run(compose(overrides), run_dir)
    assert [o["verdict"] for o in first.observations] == ["rejected"]
    # what the detached process did: rewrite the observation to "accepted"
    from kernelsynth.store import OBSERVATION_SCHEMA, atomic_write_table, rows_to_table

    shard = next((run_dir / "observations").glob("*.parquet"))
    row = pq.read_table(shard).to_pylist()[0] | {"verdict": "accepted", "fault": "ok", "reason": None}
    atomic_write_table(shard, rows_to_table([row], OBSERVATION_SCHEMA))
    second = engine.run(compose(overrides), run_dir)
    assert [o["verdict"] for o in second.observations] == ["rejected"]  # measured again, not trusted
    run = json.loads((run_dir / "run.json").read_text())
    assert [(e["at"], Path(e["file"]).name) for e in run["integrity_events"]] == [("resume", shard.name)]
    assert run["integrity_events"][0]["problem"] == "no authentication tag"
    assert pq.read_table(run_dir / "observations.parquet").schema.metadata[b"kernelsynth.hmac"]
    if run["sandbox"]["active"] and os.geteuid() == 0:  # run.json describes the jobs' sandbox, not the probe's
        assert run["sandbox"]["drop_uid"] is False and "uid 0" in run["sandbox"]["status"], run["sandbox"]


def test_a_candidate_file_private_to_the_user_keeps_the_worker_at_uid_0(tmp_path):
    """Found by test_external_candidates_from_files_folders_and_tables_get_verdicts: copies of
    table sources were written 0600, and workers under their own uid could not import them."""
    _sandbox_or_skip()
    if os.geteuid() != 0:
        pytest.skip("the uid drop applies to root runs only")
    folder = tmp_path / "cands"
    folder.mkdir()
    os.chmod(folder, 0o755)
    (folder / "a.py").write_text("x = 1\n")
    os.chmod(folder / "a.py", 0o644)
    assert Sandbox(SandboxSettings(), readable=[str(folder)]).drop_uid is True
    os.chmod(folder / "a.py", 0o600)
    box = Sandbox(SandboxSettings(), readable=[str(folder)])
    assert box.drop_uid is False and "not readable by other users" in box.status
    # a hidden folder inside a readable one (the run directory) is not walked
    run = folder / "run"
    run.mkdir()
    (run / ".observation-key").write_text("00")
    os.chmod(run / ".observation-key", 0o600)
    os.chmod(folder / "a.py", 0o644)
    assert Sandbox(SandboxSettings(), readable=[str(folder)], hidden=[str(run)]).drop_uid is True


def test_root_only_mig_capability_nodes_do_not_keep_gpu_workers_at_uid_0(tmp_path, monkeypatch):
    """Seen on the H200: /dev/nvidia0, nvidiactl and nvidia-uvm are 0666 but
    /dev/nvidia-caps/nvidia-cap1 is 0400, and requiring every node kept workers at uid 0
    (RLIMIT_NPROC not enforced). The capability nodes are bound but not required; a root-only
    node CUDA does open still keeps uid 0, and the status line names it."""
    import kernelsynth.sandbox as sb

    _sandbox_or_skip()
    if os.geteuid() != 0:
        pytest.skip("the uid drop applies to root runs only")
    shared = tmp_path / "nvidia0"
    shared.write_text("")
    os.chmod(shared, 0o666)
    monkeypatch.setattr(sb, "gpu_device_nodes", lambda: [str(shared), "/dev/nvidia-caps/nvidia-cap1"])
    assert Sandbox(SandboxSettings(), gpu=True).drop_uid is True
    os.chmod(shared, 0o600)
    box = Sandbox(SandboxSettings(), gpu=True)
    assert box.drop_uid is False and f"the device node {shared} is usable by root only" in box.status


def test_a_worker_under_its_own_uid_has_a_user_name(tmp_path):
    """Seen on the H200 (torch 2.11): after the uid drop, importing torch._dynamo called
    getpass.getuser() for Inductor's cache folder, and a uid without a passwd entry raised
    KeyError, so every GPU worker died at start. The worker now names its user."""
    if os.geteuid() != 0:
        pytest.skip("the uid drop applies to root runs only")
    code = ("from kernelsynth.sandbox import enter_worker; import getpass, os; "
            "enter_worker({'uid': 345678, 'groups': [], 'nofile': 256, 'fsize': 1 << 20, 'cpu_s': 60, "
            "'cpu_s_worker': 60, 'nproc': 64, 'sandboxed': False}); print(os.getuid(), getpass.getuser())")
    import tempfile

    home = tempfile.mkdtemp(prefix="ks-uid-home-", dir="/tmp")
    os.chmod(home, 0o777)  # the dropped uid creates HOME's contents
    env = {k: v for k, v in os.environ.items() if k not in ("USER", "LOGNAME", "LNAME", "USERNAME", "TMPDIR")}
    env["HOME"], env["PYTHONPATH"] = home, str(Path(__file__).resolve().parents[1])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", timeout=60)
    shutil.rmtree(home, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["345678", "kernelsynth-worker-345678"]


def test_a_result_longer_than_the_cap_is_refused_before_it_is_buffered():
    """Found by the compile-cache helper: the parent read a result of any announced length, so a
    worker could make it buffer gigabytes. A length header past the cap is a tampering result."""
    import multiprocessing
    import struct
    import types

    from kernelsynth.contract import Fault
    from kernelsynth.workers import MAX_MESSAGE_BYTES, _recv_before

    parent, child = multiprocessing.Pipe()
    os.write(child.fileno(), struct.pack("!i", -1) + struct.pack("!Q", 8 * MAX_MESSAGE_BYTES))  # 8 GiB announced
    killed = []
    w = types.SimpleNamespace(conn=parent, proc=types.SimpleNamespace(kill=lambda: killed.append(1),
                                                                      is_alive=lambda: True))
    res = _recv_before(w, time.monotonic() + 10)
    assert res.fault == Fault.TAMPERING and "longer than" in res.error and killed == [1]


def test_a_run_directory_inside_the_home_and_a_readable_repo_stays_hidden(tmp_path, monkeypatch):
    """Seen on the H200: with the run directory under $HOME (/root/out/...), the home's tmpfs
    covered the run directory's own mount and bwrap failed ("Can't remount readonly"), so every
    worker died at start. And with a repo under the home on sys.path and its outputs/ inside it,
    binding the repo back would have shown the run directory again. /tmp or the home itself on
    sys.path (a script run from there) must not undo the hiding either."""
    _sandbox_or_skip()
    home = tmp_path / "home"
    repo = home / "proj"
    run = repo / "outputs" / "run"
    run.mkdir(parents=True)
    for d in (tmp_path, home, repo, repo / "outputs"):
        os.chmod(d, 0o755)
    (repo / "marker.txt").write_text("repo\n")
    (run / "observation.parquet").write_text("secret\n")
    (home / "token").write_text("hf_x\n")
    os.chmod(repo / "marker.txt", 0o644)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(sys, "path", [*sys.path, str(repo), "/tmp", str(home)])
    box = Sandbox(SandboxSettings(), hidden=[str(run)], readable=[str(repo)])
    code = ("import os, sys; r, h, p = sys.argv[1:4]; print(open(os.path.join(p, 'marker.txt')).read().strip()); "
            "print(sorted(os.listdir(r)), os.path.exists(os.path.join(h, 'token')));\n"
            "try:\n  open(os.path.join(r, 'x'), 'w')\nexcept OSError as e:\n  print('denied', e.errno)\n"
            "open('/tmp/scratch', 'w').write('ok'); print('tmp writable')")
    cmd = box.command([sys.executable, "-c", code, str(run), str(home), str(repo)], {"uid": None})
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:4] == ["repo", "[] False", "denied 30", "tmp writable"]


def test_a_readable_folder_inside_a_run_directory_inside_a_checkout_on_sys_path_stays_readable(tmp_path, monkeypatch):
    """Session 17's new-user review: a clone under /tmp with the default outputs/ run directory; the
    checkout is on sys.path (bound back), so the run directory is hidden again after the binds, and
    that tmpfs covered <run>/inductor, the generated candidates' folder the workers must read: every
    inductor candidate failed with FileNotFoundError. It is bound back, read-only; the rest of the
    run directory stays hidden."""
    _sandbox_or_skip()
    repo = tmp_path / "clone"
    run = repo / "outputs" / "2026-12-05" / "run"
    gen = run / "inductor"
    gen.mkdir(parents=True)
    for d in (tmp_path, repo, repo / "outputs", repo / "outputs" / "2026-12-05", run, gen):
        os.chmod(d, 0o755)
    (gen / "float32_abc.py").write_text("GENERATED = 1\n")
    (run / "observations.parquet").write_text("secret\n")
    os.chmod(gen / "float32_abc.py", 0o644)
    monkeypatch.setattr(sys, "path", [*sys.path, str(repo)])
    box = Sandbox(SandboxSettings(), hidden=[str(run)], readable=[str(repo), str(gen)])
    code = ("import os, sys; r, g = sys.argv[1:3]; print(open(os.path.join(g, 'float32_abc.py')).read().strip()); "
            "print(sorted(os.listdir(r)));\n"
            "try:\n  open(os.path.join(g, 'x'), 'w')\nexcept OSError as e:\n  print('denied', e.errno)")
    r = subprocess.run(box.command([sys.executable, "-c", code, str(run), str(gen)], {"uid": None}),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == ["GENERATED = 1", "['inductor']", "denied 30"]


def test_compile_cache_folders_the_user_set_in_read_only_places_do_not_break_workers(tmp_path, monkeypatch):
    """Seen on the H200 (bench/h200_s7.sh): TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR under the
    shared compile cache (bound read-only in the sandbox) passed through the environment's
    allow-list, and `import torch._dynamo` (the worker imports it first) failed with EROFS in every
    worker: the run stopped at its reference. A sandboxed worker's compile caches are its scratch."""
    _sandbox_or_skip()
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(cache, 0o755)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache / "triton"))
    from types import SimpleNamespace

    with WorkerPool(1, sandbox=Sandbox(SandboxSettings(mode="on"), cache=str(cache))) as pool:
        (_, res), = list(pool.map("no_such_job", [SimpleNamespace(fresh_worker=False)]))
    # the worker started (imported torch._dynamo) and ran the job: an unknown job is an exception,
    # a worker that died at import would be a crash
    assert res.fault.value == "exception", res.error[-600:]
    assert not (cache / "inductor").exists() and not (cache / "triton").exists()


def test_dev_shm_is_limited_like_tmp():
    """/dev/shm is a second writable tmpfs in the sandbox: mounted without a size it was half of
    RAM, outside ``tmp_mb`` (tests/adversarial/sandbox_s6/shm_fill.py wrote 240 MiB with tmp_mb=96)."""
    _sandbox_or_skip()
    box = Sandbox(SandboxSettings(mode="on", tmp_mb=16))
    probe = "import os\nfor p in ('/tmp', '/dev/shm'):\n    s = os.statvfs(p)\n    print(s.f_blocks * s.f_frsize >> 20)"
    p = subprocess.run(box.command([sys.executable, "-s", "-c", probe], {"uid": None}), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["16", "16"], p.stdout


def test_a_job_whose_request_asks_for_a_fresh_worker_gets_one_whatever_its_result_says():
    """The parent, not the worker's result, decides that a job's request (``fresh_worker``: every
    external candidate) gets a fresh worker: the result is written in the candidate's process, and
    tests/adversarial/sandbox_s6/persist_worker.py made it say ``recycle=False`` to stay in its
    worker and rewrite the next candidate's result. Here the job (a name :mod:`kernelsynth.jobs`
    lacks: no import beyond the worker's own) fails with ``exception``, which does not restart a
    worker by itself."""
    from types import SimpleNamespace

    pids = []
    with WorkerPool(1, sandbox=Sandbox(SandboxSettings(mode="off"))) as pool:
        jobs = [SimpleNamespace(fresh_worker=True), SimpleNamespace(fresh_worker=False),
                SimpleNamespace(fresh_worker=False)]
        results = list(pool.map("no_such_job", jobs, on_start=lambda i: pids.append(pool._workers[0].proc.pid)))
    assert [r.fault.value for _, r in results] == ["exception"] * 3, [r.error[:200] for _, r in results]
    assert pids[0] != pids[1], "the job that asked for a fresh worker left its worker to the next job"
    assert pids[1] == pids[2], "a job that did not ask for one got a fresh worker anyway"


def test_a_result_message_may_not_name_bytearray():
    """Found by tests/adversarial/sandbox_s6 pickle_bomb: bytearray was an allowed class, and the
    60-byte pickle of bytearray(N) made the parent allocate N bytes (1.5 GiB seen)."""
    import pickle

    from kernelsynth.workers import ForgedMessage, load_message

    bomb = pickle.dumps(bytearray(16))  # the same opcodes as bytearray(1 << 34), 16 bytes of payload
    with pytest.raises(ForgedMessage, match="names builtins.bytearray"):
        load_message(bomb)


def test_a_result_message_may_not_name_numpy_sets_or_complex():
    """tests/adversarial/sandbox_s7 np_void_bomb, np_struct_segv: numpy's scalar constructor and
    dtype were resolvable, so 67 bytes made the parent allocate 3 GiB and 335 bytes (a dtype with
    doctored state) crashed it with SIGSEGV. Sets, frozensets and complex are gone too (a set is
    built in C from a list: a hash flood)."""
    from kernelsynth.workers import ForgedMessage, load_message

    bomb = b"\x80\x02cnumpy._core.multiarray\nscalar\ncnumpy\ndtype\nX\x05\x00\x00\x00V1024\x85R\x85R."
    with pytest.raises(ForgedMessage, match="numpy"):
        load_message(bomb)
    for obj in ({1, 2}, frozenset({3}), 1 + 2j):
        for protocol in (2, 5):  # a class name, or (protocol 4+ sets) opcodes that need none
            with pytest.raises(ForgedMessage, match="set|complex"):
                load_message(pickle.dumps({"x": [obj]}, protocol=protocol))


def test_a_result_message_with_colliding_keys_is_refused_in_linear_time():
    """tests/adversarial/sandbox_s7 hash_flood: 40k int keys that all hash to 0 took 60 s to
    unpickle with the GIL held. Dict keys must be str."""
    import time

    from kernelsynth.workers import ForgedMessage, load_message

    P = (1 << 61) - 1
    assert len({hash(k * P) for k in range(1, 100)}) == 1
    msg = b"\x80\x02}(" + b"".join(pickle.dumps(k * P, protocol=2)[2:-1] + b"K\x00" for k in range(1, 20001)) + b"u."
    t = time.perf_counter()
    with pytest.raises(ForgedMessage, match="dict key of type int"):
        load_message(msg)
    assert time.perf_counter() - t < 1.0
    with pytest.raises(ForgedMessage, match="dict key of type int"):
        load_message(pickle.dumps({1: "a"}, protocol=2))  # SETITEM, one item
    # an honest result still loads (str keys, nested dicts, bytes, tuples, the result classes)
    from kernelsynth.contract import EvaluateResult
    from kernelsynth.workers import JobResult, plain

    from kernelsynth.contract import Fault

    r = JobResult(Fault.OK, value=EvaluateResult(verdict="accepted", reason=""), seconds=1.0)
    r.staged = {"files": {"triton/x/y.json": b"{}"}, "refused": [("a", "b")], "counts": {"misses": 1}}
    back = load_message(pickle.dumps(plain(r)))
    assert back.staged == r.staged and back.value.verdict == "accepted"


def test_numpy_values_in_a_result_are_sent_as_python_numbers():
    import numpy as np

    from kernelsynth.workers import load_message, plain

    got = load_message(pickle.dumps(plain({"a": np.float32(1.5), "b": [np.int64(3), (np.bool_(True),)]})))
    assert got == {"a": 1.5, "b": [3, (True,)]} and type(got["a"]) is float and type(got["b"][0]) is int


def test_a_worker_leaves_the_parents_session_keyring():
    """Found by tests/adversarial/sandbox_s6 keyring_read: the kernel keyring is not namespaced and
    a worker on its own uid read a key of the parent's session keyring (the possessor's right).
    enter_worker joins a new session keyring first; a child that does not can still read it."""
    import ctypes
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the test plants its key with x86_64 system call numbers")
    libc = ctypes.CDLL(None, use_errno=True)
    serial = libc.syscall(ctypes.c_long(248), b"user", b"kernelsynth-test-key", b"planted-secret", ctypes.c_size_t(14),
                          ctypes.c_long(-3))  # add_key(type, description, payload, plen, KEY_SPEC_SESSION_KEYRING)
    if serial < 0:
        pytest.skip(f"keyctl is not available here (errno {ctypes.get_errno()}): no keyring to leak")
    read = ("import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); buf = ctypes.create_string_buffer(64); "
            "n = libc.syscall(ctypes.c_long(250), ctypes.c_long(11), ctypes.c_long(int(sys.argv[1])), buf, "
            "ctypes.c_size_t(64)); print(buf.raw[:n].decode() if n > 0 else 'denied')")  # KEYCTL_READ
    join = "from kernelsynth.sandbox import join_new_session_keyring; assert join_new_session_keyring(); "
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        plain = subprocess.run([sys.executable, "-c", read, str(serial)], capture_output=True, text=True, env=env)
        joined = subprocess.run([sys.executable, "-c", join + read, str(serial)], capture_output=True, text=True,
                                env=env)
    finally:
        libc.syscall(ctypes.c_long(250), ctypes.c_long(3), ctypes.c_long(serial))  # KEYCTL_REVOKE
    assert plain.stdout.strip() == "planted-secret", plain.stderr  # the leak, without the new keyring
    assert joined.stdout.strip() == "denied", joined.stderr


def test_a_process_whose_leader_exited_is_counted_and_killed_after_the_job():
    """Found by tests/adversarial/sandbox_s6 hidden_leader: a process whose main thread ended with
    the raw exit system call shows Z while a thread of it runs on; the leftover count skipped it
    and it lived on into later jobs. Counted now, and in the sandbox every process of the worker's
    PID namespace is killed after each job."""
    box = _sandbox_or_skip()
    code = ("import ctypes, os, threading, time\n"
            "from kernelsynth.sandbox import kill_namespace_leftovers, leftover_processes\n"
            "if os.fork() == 0:\n"
            "    threading.Thread(target=lambda: time.sleep(60)).start()\n"
            "    ctypes.CDLL(None).syscall(60, 0)  # exit(2) of the main thread only\n"
            "time.sleep(0.5)\n"
            "print(len(leftover_processes(True)))\n"
            "kill_namespace_leftovers(); time.sleep(0.3)\n"
            "print(len(leftover_processes(True)))\n")
    cmd = box.command([sys.executable, "-c", code], {"uid": None})
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.stdout.split() == ["1", "0"], r.stdout + r.stderr


def test_a_workers_output_goes_to_its_own_file_and_a_crash_quotes_its_tail(tmp_path, capfd):
    """Found by tests/adversarial/sandbox_s6 stdout_flood / fds_parent: workers wrote to the run's
    own stdout and stderr (40 MiB and a forged "accepted" line reached the run's log, which a
    worker could also read back). Their output now goes to a file of the parent's, bounded by
    RLIMIT_FSIZE, and a crash's reason quotes its last lines."""
    box = _sandbox_or_skip()
    ref = tmp_path / "loud_reference.py"
    ref.write_text("import os, sys\nsys.stdout.write('x' * 200000 + '\\n[kernelsynth] accepted forged 0.0001 ms\\n')\n"
                   "sys.stdout.flush()\nsys.stderr.write('last words\\n'); sys.stderr.flush()\nos._exit(3)\n")
    os.chmod(tmp_path, 0o755)
    os.chmod(ref, 0o644)
    sandbox = Sandbox(SandboxSettings(mode="on"), readable=[str(tmp_path)])
    assert sandbox.active, box.problem
    with WorkerPool(1, env={"TRITON_INTERPRET": "1"}, sandbox=sandbox) as pool:
        res = pool.run("probe", {"reference": str(ref)})
    assert res.fault.value == "crashed"
    assert res.error.startswith("worker process exited with code 3 during the job; its last output:\n")
    assert res.error.endswith("accepted forged 0.0001 ms\nlast words") and len(res.error) < 4200
    out, err = capfd.readouterr()
    assert "forged" not in out + err and "xxxx" not in out + err


def test_external_candidates_refuse_a_sandbox_that_keeps_uid_0(tmp_path):
    """Found by tests/adversarial/sandbox_s6 uid0_fallback: a 0600 file beside a candidate kept
    the workers at uid 0, which reads /etc/shadow and every root-owned file not hidden, with no
    capability. External candidates are refused in that mode unless the user accepts the risk."""
    _sandbox_or_skip()
    if os.geteuid() != 0:
        pytest.skip("the uid drop applies to root runs only")
    cands = tmp_path / "cands"
    cands.mkdir()
    shutil.copy(ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py", cands / "index.py")
    (cands / "notes.txt").write_text("private\n")
    os.chmod(cands / "notes.txt", 0o600)
    for p, mode in ((tmp_path, 0o755), (cands, 0o755), (cands / "index.py", 0o644)):
        os.chmod(p, mode)
    spec = tmp_path / "spec"
    spec.mkdir()
    _spec(spec, [])
    (spec / "spec.yaml").write_text((spec / "spec.yaml").read_text().replace(
        "candidates:", f"candidates:\n  - {{version: v0, name: honest, file: {cands / 'index.py'}, technique: index, "
        "rationale: honest}"))
    run = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.sandbox.mode=on",
           f"task.spec={spec / 'spec.yaml'}", f"exploration.extra_candidates=[{cands / 'index.py'}]"]
    with pytest.raises(UserError, match="refusing to run external candidates in a sandbox that keeps uid 0 .*"
                                        "not readable by other users"):
        engine.run(compose(run), tmp_path / "refused")


def test_a_source_too_deep_for_the_parser_is_a_finding_not_a_crash():
    """tests/adversarial/sandbox_s7 screen_crash: ast.parse raised MemoryError (or RecursionError)
    in the parent's screen, which did not catch it: the run ended with no observation."""
    from kernelsynth.screen import screen_source

    for source in ("x = " + "-" * 200000 + "1\n", "x = " + "1+" * 300000 + "1\n"):
        (finding,) = screen_source(source)
        assert finding.startswith("the source is nested too deep to parse"), finding
    assert screen_source("import torch\nx = -1\n") == []


def test_a_unix_socket_on_the_hosts_filesystem_is_not_reachable():
    """tests/adversarial/sandbox_s7 unix_socket: a path-bound unix socket is not isolated by the
    network namespace, and /run (the session bus, docker.sock, agents) was visible: a candidate
    sent bytes to a listener at /run/kernelsynth-s7.sock and read its reply."""
    _sandbox_or_skip()
    path = f"/run/kernelsynth-test-{os.getpid()}.sock"
    try:
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
    except OSError as e:
        pytest.skip(f"cannot make a socket under /run here: {e}")
    try:
        os.chmod(path, 0o666)
        srv.listen(1)
        srv.setblocking(False)
        box = Sandbox(SandboxSettings(mode="on"))
        code = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1]); s.send(b'x')"
                "\n    print('connected')\nexcept OSError as e:\n    print('refused', type(e).__name__)")
        r = subprocess.run(box.command([sys.executable, "-s", "-c", code, path], {"uid": None}), capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split()[0] == "refused", r.stdout
        with pytest.raises(BlockingIOError):
            srv.accept()
        # the host side can still connect: the listener was reachable, the sandbox is what hid it
        c = socket.socket(socket.AF_UNIX)
        c.connect(path)
        c.close()
    finally:
        srv.close()
        os.unlink(path)


def test_a_worker_killed_while_it_starts_leaves_no_process_behind():
    """tests/adversarial/sandbox_s7 startup_kill: a worker killed in bwrap's first ~20 ms (the pool
    kills a fresh spare when a run ends or fails right after starting one) left the inner bwrap,
    pid 1 of the new PID namespace, alive for good with ppid 1 and the parent's descriptors."""
    _sandbox_or_skip()
    from kernelsynth.workers import _Worker

    box = Sandbox(SandboxSettings(mode="on", tmp_mb=77))
    marker = b"--size\x00" + str(77 << 20).encode() + b"\x00"
    for delay in (0.0, 0.0, 0.005, 0.01, 0.02, 0.05):
        w = _Worker(box, {})
        time.sleep(delay)
        w.proc.kill()
        w.proc.join(5)
    time.sleep(1.0)

    def cmdline(p):
        try:
            return (p / "cmdline").read_bytes()
        except OSError:
            return b""

    left = [p.name for p in Path("/proc").glob("[0-9]*") if marker in cmdline(p)]
    assert left == [], f"bwrap processes left behind: {left}"


def test_a_sweep_job_cannot_read_its_sibling_jobs(tmp_path, monkeypatch):
    """tests/adversarial/sandbox_s7 sweep_sibling: only the job's own directory was hidden, so job
    1's candidate read job 0's log, config, observations and corpus copies. A multirun job hides
    the sweep's folder (cli passes ``hidden=[hydra.sweep.dir]`` to engine.run, which hands it to
    the probe's and the exploration's sandboxes)."""
    _sandbox_or_skip()
    top = ROOT / "outputs" / f".test-sweep-{os.getpid()}"  # a visible folder (/tmp is private in the sandbox)
    sweep = top / "multirun" / "x"
    try:
        (sweep / "0").mkdir(parents=True)
        (sweep / "1").mkdir()
        for d in (top, top / "multirun", sweep, sweep / "0", sweep / "1"):
            os.chmod(d, 0o755)
        (sweep / "0" / "cli.log").write_text("job 0's log\n")
        os.chmod(sweep / "0" / "cli.log", 0o644)
        code = "import sys\ntry:\n    print(open(sys.argv[1]).read().strip())\nexcept OSError as e:\n    print('hidden', e.errno)"
        argv = [sys.executable, "-s", "-c", code, str(sweep / "0" / "cli.log")]
        for hidden, expect in (([str(sweep / "1")], "job"), ([str(sweep / "1"), str(sweep)], "hidden")):
            box = Sandbox(SandboxSettings(mode="on"), hidden=hidden)
            r = subprocess.run(box.command(argv, {"uid": None}), capture_output=True, text=True, timeout=60)
            if expect == "job" and r.stdout.split()[:1] == ["hidden"]:
                pytest.skip(f"{top} is hidden from workers anyway (under the home?)")
            assert r.returncode == 0 and r.stdout.split()[0] == expect, (hidden, r.stdout, r.stderr)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    from kernelsynth.stages.exploration import Exploration

    box = Exploration().sandbox_for([], sweep / "1", [], gpu=False, hidden=[str(sweep)])
    assert str(sweep) in box.hidden


def test_dev_is_read_only_in_the_sandbox():
    """tests/adversarial/sandbox_s8 scratch_census: bwrap's /dev is a tmpfs without a size, owned
    by the worker's uid in a non-root run (or when the worker keeps uid 0): 300 MiB went into it
    past tmp_mb. It is remounted read-only; its device nodes and /dev/shm still work."""
    _sandbox_or_skip()
    box = Sandbox(SandboxSettings(mode="on", tmp_mb=16))
    probe = ("import os, errno\ntry:\n    open('/dev/sb8-fill', 'wb').write(b'x' * 4096); print('written')\n"
             "except OSError as e:\n    print(errno.errorcode[e.errno])\n"
             "open('/dev/null', 'wb').write(b'x'); open('/dev/shm/x', 'wb').write(b'x')\n"
             "print(len(open('/dev/urandom', 'rb').read(8)))")
    p = subprocess.run(box.command([sys.executable, "-s", "-c", probe], {"uid": None}), capture_output=True,
                       text=True, timeout=60)  # uid None: as the run's own uid, the owner of the tmpfs
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["EROFS", "8"], p.stdout


def test_credential_files_named_by_the_environment_are_hidden_wherever_they_are(monkeypatch):
    """tests/adversarial/sandbox_s8 cred_files: outside the home, a token file under HF_HOME and a
    service-account key named by GOOGLE_APPLICATION_CREDENTIALS (0644, as gcloud leaves it) were
    readable by every worker, and a 0600 one too in a non-root run (the worker has the user's uid)."""
    _sandbox_or_skip()
    top = ROOT / "outputs" / f".test-creds-{os.getpid()}"  # a visible folder (/tmp is private in the sandbox)
    try:
        (top / "hf").mkdir(parents=True)
        (top / "creds.d").mkdir()
        files = {top / "hf" / "token": "hf_planted", top / "sa.json": '{"private_key": "planted"}',
                 top / "creds.d" / "db": "planted", top / "visible.txt": "not a secret"}
        for f, text in files.items():
            f.write_text(text)
            os.chmod(f, 0o644)
        for d in (top, top / "hf", top / "creds.d"):
            os.chmod(d, 0o755)
        monkeypatch.setenv("HF_HOME", str(top / "hf"))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(top / "sa.json"))
        monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(top / "creds.d"))  # systemd's, a folder
        code = ("import sys\nfor p in sys.argv[1:]:\n    try:\n        print(open(p).read().strip() or 'empty')\n"
                "    except OSError as e:\n        print('denied', e.errno)")
        box = Sandbox(SandboxSettings(mode="on"))
        r = subprocess.run(box.command([sys.executable, "-s", "-c", code, *map(str, files)], {"uid": None}),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        if lines[-1] != "not a secret":
            pytest.skip(f"{top} is hidden from workers anyway (under the home?)")
        assert not any("planted" in x for x in lines), lines
        assert [x.split()[0] for x in lines[:3]] == ["denied"] * 3, lines
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_result_message_may_not_name_ordereddict():
    """tests/adversarial/sandbox_s8 odict_flood: an OrderedDict is built by a call on a list of
    pairs, so its keys escaped the str-key check: 8,000 colliding int keys took 4 s (quadratic)
    with the GIL held. Results carry plain dicts (workers.plain)."""
    import collections
    import time

    from kernelsynth.workers import ForgedMessage, load_message, plain

    P = (1 << 61) - 1
    msg = b"\x80\x02ccollections\nOrderedDict\n" + pickle.dumps([(k * P, 0) for k in range(1, 8001)],
                                                                  protocol=2)[2:-1] + b"\x85R."
    t = time.perf_counter()
    with pytest.raises(ForgedMessage, match="collections.OrderedDict"):
        load_message(msg)
    assert time.perf_counter() - t < 1.0
    sent = plain({"a": collections.OrderedDict(b=1)})  # what a worker sends of one
    assert load_message(pickle.dumps(sent, protocol=4)) == {"a": {"b": 1}}


def test_a_job_result_whose_error_or_seconds_have_the_wrong_type_is_tampering():
    """tests/adversarial/sandbox_s8 jobresult_fields: ``JobResult(error=12345)`` made the parent's
    observation_row raise AttributeError (``error.splitlines()``), which ended the run; seconds
    are the row's wall_s. Checked where the message is read."""
    import multiprocessing as mp
    import time
    import types

    from kernelsynth.contract import Fault
    from kernelsynth.workers import JobResult, _recv_before

    for bad in (JobResult(Fault.EXCEPTION, error=12345), JobResult(Fault.OK, seconds="0.5"),
                JobResult(Fault.OK, seconds=float("nan")), JobResult(Fault.OK, seconds=2 ** 70),
                JobResult(Fault.EXCEPTION, error="x", seconds=0.5)):
        parent, child = mp.Pipe()
        w = types.SimpleNamespace(conn=parent, proc=types.SimpleNamespace(is_alive=lambda: True, kill=lambda: None))
        child.send_bytes(pickle.dumps(bad, protocol=4))
        got = _recv_before(w, time.monotonic() + 10)
        if bad.error == "x":  # a well-formed one comes as it was sent
            assert (got.fault, got.error, got.seconds) == (Fault.EXCEPTION, "x", 0.5)
        else:
            assert got.fault is Fault.TAMPERING and "not a str" in got.error, (bad, got)
        parent.close()
        child.close()


def test_refused_staging_entries_that_are_not_text_are_recorded_not_formatted(tmp_path):
    """tests/adversarial/sandbox_s8 refused_deep: ``CompileCache.receive`` str()-ed each item of a
    result's ``staged["refused"]``, tainted worker or not; a list nested 100,000 deep raised
    RecursionError in the parent (and a shared nesting would be exponential)."""
    from kernelsynth.cache import CompileCache
    from kernelsynth.workers import load_message

    deep = load_message(b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b".")
    cache = CompileCache(tmp_path / "cache", sandboxed=True)
    cache.receive({"files": {}, "refused": [(deep, "x"), ("cuda/a.cubin", deep), ("triton/x", "a symlink")],
                   "counts": {}}, "external sb8", taint="ran the external candidate sb8")
    assert [(e["entry"], e["problem"]) for e in cache.events] == [
        ("(a list, not text)", "refused in the worker: x"),
        ("cuda/a.cubin", "refused in the worker: (a list, not text)"),
        ("triton/x", "refused in the worker: a symlink")]
    assert cache.counts["refused"] == 3


def test_a_python_in_a_virtual_environment_under_tmp_gets_the_sandbox(tmp_path):
    """A new user's venv under /tmp (session 8's fresh-clone check): the sandbox's private /tmp hid
    the interpreter from bwrap's availability probe (``execvp /tmp/.../bin/python: No such file``),
    so runs went unsandboxed and external candidates were refused. The probe binds an interpreter
    under /tmp back read-only, as the workers' command already did; a sandboxed job runs there."""
    import tempfile

    venv = tempfile.mkdtemp(prefix="ks-venv-", dir="/tmp")
    try:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
                       check=True, timeout=120)
        code = ("from kernelsynth.sandbox import Sandbox, bwrap_problem, find_bwrap\n"
                "from kernelsynth.workers import WorkerPool\n"
                "print('problem', bwrap_problem(find_bwrap()))\n"
                "sb = Sandbox()\n"
                "with WorkerPool(1, sandbox=sb) as pool:\n"
                "    r = pool.run('probe', {})\n"
                "print('active', sb.active, 'ok', r.ok, r.error)\n")
        p = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code], capture_output=True, text=True,
                           cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert p.returncode == 0, p.stderr[-2000:]
        assert "problem None" in p.stdout and "active True ok True" in p.stdout, (p.stdout, p.stderr[-2000:])
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_the_folder_holding_kernelsynth_is_readable_in_the_sandbox_wherever_it_is(monkeypatch):
    """A fresh clone under /tmp with an editable install (session 8): the package is imported
    through the install's finder, not through sys.path, so a worker in the private /tmp could not
    import kernelsynth (``ModuleNotFoundError`` in test_tunables' sweep). The package's folder is
    bound back read-only, like the interpreter's."""
    import tempfile

    from kernelsynth import sandbox as sb

    box = _sandbox_or_skip()
    fake = tempfile.mkdtemp(prefix="ks-clone-", dir="/tmp")
    try:
        monkeypatch.setattr(sb, "PACKAGE_ROOT", fake)
        cmd = box.command([sys.executable, "-c", "pass"], {"uid": None})
        assert any(cmd[i:i + 3] == ["--ro-bind", fake, fake] for i in range(len(cmd))), cmd
        code = f"import os; print(os.path.isdir({fake!r}))"
        r = subprocess.run(box.command([sys.executable, "-c", code], {"uid": None}), capture_output=True, text=True,
                           timeout=60)
        assert r.stdout.strip() == "True", r.stdout + r.stderr
    finally:
        shutil.rmtree(fake, ignore_errors=True)
