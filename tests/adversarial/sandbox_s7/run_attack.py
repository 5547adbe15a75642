"""Run attacks of this folder through the real sandbox (bubblewrap), as external candidates (the
default here) or spec candidates of one engine run on the CPU path (hw=cpu,
exploration.sandbox.mode=on), and print each observation's verdict, fault and reason (where the
attacks put their evidence). Extends tests/adversarial/sandbox_s6/run_attack.py with what this
session's attacks need:

    PYTHONPATH=$PWD python3 tests/adversarial/sandbox_s7/run_attack.py [--spec] [--screen] [--timeout S]
        [--unix PATH] [--lock] [--sweep] [--keep] [--private] [--hf] [--run-dir DIR] [--extra FILE ...] ATTACK [ATTACK ...]

``--unix PATH``: listen on a filesystem unix socket at PATH (mode 0666, as PostgreSQL's
/run/postgresql/.s.PGSQL.5432, D-Bus's /run/dbus/system_bus_socket or a docker.sock for its
group) and print what connects. ``--lock``: plant ``<cache_dir>/ceilings.lock`` (what a GPU run
creates, kernelsynth/hardware.py) and poll, from this process, whether a
``flock(LOCK_EX|LOCK_NB)`` on it (what another run's ``load_or_measure_ceilings`` takes) is
refused. ``--sweep``: the run directory is job 1 of a Hydra-style sweep folder under the
repository (``multirun-s7/<pid>/1``) whose job 0 is planted (observations, key, log, an external
candidate's source). A heartbeat thread records the longest time this process's Python threads
could not run (the GIL held). The cache is ``/srv/sb7-cache-<pid>`` (outside /tmp and the home,
as a shared cache would be).
"""
import argparse
import fcntl
import os
import shutil
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import compose  # noqa: E402
from kernelsynth import engine  # noqa: E402


def unix_listener(path, got):
    Path(path).unlink(missing_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o666)
    s.listen(5)
    s.settimeout(0.5)

    def serve():
        while not got.get("stop"):
            try:
                c, _ = s.accept()
                c.settimeout(5)
                data = c.recv(4096)
                c.sendall(b"hello from the host's local service, outside the sandbox\n")
                got.setdefault("conns", []).append(data)
                c.close()
            except OSError:
                pass
    threading.Thread(target=serve, daemon=True).start()
    return s


def lock_poller(path, got):
    def poll():
        while not got.get("stop"):
            with open(path, "w") as f:
                t = time.monotonic()
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(f, fcntl.LOCK_UN)
                except OSError:
                    got.setdefault("refused", []).append(t)
            time.sleep(0.5)
    threading.Thread(target=poll, daemon=True).start()


def heartbeat(got):
    def beat():
        last = time.monotonic()
        while not got.get("stop"):
            time.sleep(0.05)
            now = time.monotonic()
            got["max_gap"] = max(got.get("max_gap", 0.0), now - last)
            last = now
    threading.Thread(target=beat, daemon=True).start()


def plant_sweep_job0(job0: Path):
    (job0 / ".hydra").mkdir(parents=True)
    (job0 / ".hydra" / "config.yaml").write_text("task:\n  name: flip2d\nexploration:\n  extra_candidates: "
                                                 "[/srv/corpus/competitor.py]\n")
    (job0 / "observations").mkdir()
    (job0 / "observations" / "0123abcd.parquet").write_text("job 0's observation (planted)\n")
    (job0 / "kernelsynth.log").write_text("[kernelsynth] job 0 log: accepted competitor 0.0123 ms (planted)\n")
    (job0 / "extra_candidates").mkdir()
    (job0 / "extra_candidates" / "corpus_competitor_0123456789.py").write_text(
        "# job 0's external candidate, from a corpus table (planted): the competitor's kernel source\n")
    key = job0 / ".observation-key"
    key.write_text("ab" * 32)
    os.chmod(key, 0o600)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attacks", nargs="+")
    ap.add_argument("--spec", action="store_true", help="attacks as spec candidates instead of external ones")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--fresh", default="external")
    ap.add_argument("--screen", action="store_true", help="exploration.screen_sources=true")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--unix")
    ap.add_argument("--lock", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (spec, candidates) and the run dir")
    ap.add_argument("--extra", nargs="*", default=[])
    ap.add_argument("--hf", action="store_true", help="HF_TOKEN in the environment; HF_HOME=/srv/sb7-hf with a "
                    "token written by huggingface_hub's own secret writer")
    ap.add_argument("--run-dir", help="this run directory (a second call with the same one resumes it)")
    ap.add_argument("--private", action="store_true", help="attack files mode 0600 (umask 077)")
    a = ap.parse_args()
    pid = os.getpid()
    work = Path(f"/srv/sb7-work-{pid}")  # outside /tmp (private in the sandbox) and the home
    cache = Path(f"/srv/sb7-cache-{pid}")
    if a.sweep:
        sweep = ROOT / "multirun-s7" / str(pid)
        plant_sweep_job0(sweep / "0")
        run_dir = sweep / "1"
    else:
        run_dir = Path(a.run_dir or f"/tmp/sb7-run-{pid}")
    work.mkdir(mode=0o755)
    os.chmod(work, 0o755)
    files = []
    for name in a.attacks:
        src = (HERE / f"{name}.py").read_text().replace('RUN_DIR = ""', f"RUN_DIR = {str(run_dir)!r}")
        (work / f"{name}.py").write_text(src)
        files.append(work / f"{name}.py")
        if a.private:
            os.chmod(work / f"{name}.py", 0o600)
    ref = ROOT / "specs" / "flip2d" / "reference.py"
    honest = ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py"
    lines = [f"name: sandbox_flip\ncategory: test_fixture\nreference: {ref}\ndims: [M, N]\n"
             "shapes:\n  verify: [[3, 5], [4, 67]]\ndtypes: [float32]\ncomparison: exact\n"
             "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\nreference_ops: [flip]\ncandidates:",
             f"  - {{version: v0, name: honest, file: {honest}, technique: index, rationale: honest}}"]
    for f in (files if a.spec else []):
        lines.append(f"  - {{version: {f.stem}, name: {f.stem}, file: {f}, technique: attack, rationale: attack}}")
    (work / "spec.yaml").write_text("\n".join(lines) + "\n")
    over = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", f"exploration.workers={a.workers}",
            f"exploration.fresh_worker={a.fresh}", f"exploration.screen_sources={str(a.screen).lower()}",
            "exploration.sandbox.mode=on", "exploration.sandbox.nproc=128", "exploration.sandbox.fsize_mb=8",
            "exploration.sandbox.tmp_mb=96", f"exploration.timeout_s={a.timeout}", f"task.spec={work / 'spec.yaml'}",
            f"cache_dir={cache}"]
    ext = ([] if a.spec else files) + [str(HERE / e) if not e.startswith("/") else e for e in a.extra]
    if ext:
        over.append("exploration.extra_candidates=[" + ",".join(map(str, ext)) + "]")
    got = {}
    lst = unix_listener(a.unix, got) if a.unix else None
    if a.lock:
        cache.mkdir(parents=True)
        (cache / "ceilings.lock").write_text("")
        os.chmod(cache / "ceilings.lock", 0o644)  # open(path, "w") under umask 022, as hardware.py makes it
        lock_poller(cache / "ceilings.lock", got)
    if a.hf:
        from huggingface_hub.utils import _auth
        os.environ["HF_TOKEN"] = "hf_sb7envTOKEN0123456789"
        os.environ["HF_HOME"] = "/srv/sb7-hf"
        Path("/srv/sb7-hf").mkdir(exist_ok=True)
        _auth._write_secret(Path("/srv/sb7-hf/token"), "hf_sb7fileTOKEN0123456789")
        print("planted HF_TOKEN and /srv/sb7-hf/token, mode", oct(os.stat("/srv/sb7-hf/token").st_mode & 0o777))
    heartbeat(got)
    start = time.monotonic()
    res = None
    try:
        res = engine.run(compose(over), run_dir)
    except BaseException as e:  # noqa: BLE001 - the evidence of a crashed run
        print(f"\n=== engine.run RAISED {type(e).__name__}: {str(e)[:300]}")
        traceback.print_exc(limit=6)
    finally:
        got["stop"] = True
        if lst:
            lst.close()
    import resource
    print(f"\n=== parent peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MiB")
    print(f"=== longest stall of this process's Python threads: {got.get('max_gap', 0):.1f} s "
          f"(exploration.timeout_s={a.timeout})")
    print(f"=== run took {time.monotonic() - start:.1f} s; run dir {run_dir}; run.json exists: "
          f"{(run_dir / 'run.json').is_file()}")
    if (run_dir / "run.json").is_file():
        import json
        print("run.json sandbox.status:", json.loads((run_dir / "run.json").read_text())["sandbox"]["status"])
    for o in res.observations if res else []:
        print(f"--- {o['role']} {o['name']} {o.get('version')}: verdict={o['verdict']} fault={o['fault']} "
              f"wall_s={o.get('wall_s') or 0:.1f}")
        print("    reason:", (o.get("reason") or "")[:1500].replace("\n", "\n    "))
    if a.unix:
        print("unix socket connections received by the host service:", got.get("conns"))
        Path(a.unix).unlink(missing_ok=True)
    if a.lock:
        r = got.get("refused", [])
        print(f"ceilings.lock: another run's flock was refused {len(r)} time(s)"
              + (f", for {r[-1] - r[0]:.1f} s" if r else ""))
    time.sleep(2)
    left = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if str(cache) in cmd and int(p.name) != os.getpid():
                left.append((int(p.name), int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]), cmd.split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    print("processes of this run's workers still alive 2 s after it ended (pid, ppid, program):", left)
    if a.hf:
        shutil.rmtree("/srv/sb7-hf", ignore_errors=True)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        if a.sweep:
            shutil.rmtree(run_dir.parent, ignore_errors=True)
    else:
        print(f"kept {work} {cache} {run_dir}")


if __name__ == "__main__":
    main()
