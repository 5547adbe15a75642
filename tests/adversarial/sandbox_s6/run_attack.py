"""Run attacks of this folder through the real sandbox (bubblewrap), as spec candidates or as
external candidates of one engine run on the CPU path, and print each observation's verdict,
fault and reason (where the attacks put their evidence).

    PYTHONPATH=$PWD python3 tests/adversarial/sandbox_s6/run_attack.py [--external] [--workers N]
        [--fresh external|always] [--keyring] [--abstract] [--private] [--extra FILE ...] ATTACK [ATTACK ...]

``--keyring`` plants a secret key in this process's session keyring first (a user whose login
session holds a token, as Kerberos KEYRING ccaches and keyctl users do); ``--abstract`` listens
on an abstract unix socket (``@kernelsynth-s6``) during the run. The run directory is
/tmp/sbattack-run-<pid>; its path is substituted for ``RUN_DIR = ""`` in the attacks.
"""
import argparse
import ctypes
import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests"))
PLANTED = "kernelsynth-s6-keyring-secret-0123456789"

from conftest import compose  # noqa: E402
from kernelsynth import engine  # noqa: E402


def plant_key():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    KEYCTL_JOIN_SESSION_KEYRING, KEY_SPEC_SESSION_KEYRING = 1, -3
    if libc.syscall(250, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:  # keyctl: a fresh session keyring for this run
        raise OSError(ctypes.get_errno(), "keyctl join")
    data = PLANTED.encode()
    kid = libc.syscall(248, b"user", b"kernelsynth-s6-planted", data, len(data), KEY_SPEC_SESSION_KEYRING)  # add_key
    if kid < 0:
        raise OSError(ctypes.get_errno(), "add_key")
    print(f"planted key {kid} in the parent's session keyring", flush=True)


def abstract_listener(got):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0kernelsynth-s6")
    s.listen(5)
    s.settimeout(0.5)

    def serve():
        while not got.get("stop"):
            try:
                c, _ = s.accept()
                got.setdefault("conns", []).append(c.recv(100))
                c.close()
            except OSError:
                pass
    threading.Thread(target=serve, daemon=True).start()
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attacks", nargs="+")
    ap.add_argument("--external", action="store_true")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--fresh", default="external")
    ap.add_argument("--keyring", action="store_true")
    ap.add_argument("--abstract", action="store_true")
    ap.add_argument("--extra", nargs="*", default=[])
    ap.add_argument("--private", action="store_true", help="attack files mode 0600; plant /srv/kernelsynth-s6-secret")
    a = ap.parse_args()
    work = Path(f"/tmp/sbattack-work-{os.getpid()}")
    run_dir = Path(f"/tmp/sbattack-run-{os.getpid()}")
    work.mkdir(mode=0o755)
    os.chmod(work, 0o755)
    files = []
    for name in a.attacks:
        src = (HERE / f"{name}.py").read_text().replace('RUN_DIR = ""', f"RUN_DIR = {str(run_dir)!r}")
        (work / f"{name}.py").write_text(src)
        files.append(work / f"{name}.py")
        if a.private:
            os.chmod(work / f"{name}.py", 0o600)
    if a.private:
        secret = Path("/srv/kernelsynth-s6-secret")
        secret.write_text("s6-root-only-secret-0123456789\n")
        os.chmod(secret, 0o600)
    ref = ROOT / "specs" / "flip2d" / "reference.py"
    honest = ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py"
    cands = ([] if a.external else files)
    lines = [f"name: sandbox_flip\ncategory: test_fixture\nreference: {ref}\ndims: [M, N]\n"
             "shapes:\n  verify: [[3, 5], [4, 67]]\ndtypes: [float32]\ncomparison: exact\n"
             "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\nreference_ops: [flip]\ncandidates:",
             f"  - {{version: v0, name: honest, file: {honest}, technique: index, rationale: honest}}"]
    for f in cands:
        lines.append(f"  - {{version: {f.stem}, name: {f.stem}, file: {f}, technique: attack, rationale: attack}}")
    (work / "spec.yaml").write_text("\n".join(lines) + "\n")
    over = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", f"exploration.workers={a.workers}",
            f"exploration.fresh_worker={a.fresh}", "exploration.screen_sources=false", "exploration.sandbox.mode=on",
            "exploration.sandbox.nproc=128", "exploration.sandbox.fsize_mb=8", "exploration.sandbox.tmp_mb=96",
            "exploration.timeout_s=120", f"task.spec={work / 'spec.yaml'}"]
    ext = (files if a.external else []) + [str(HERE / e) if not e.startswith("/") else e for e in a.extra]
    if ext:
        over.append("exploration.extra_candidates=[" + ",".join(map(str, ext)) + "]")
    if a.keyring:
        plant_key()
    got = {}
    lst = abstract_listener(got) if a.abstract else None
    start = time.monotonic()
    try:
        res = engine.run(compose(over), run_dir)
    finally:
        got["stop"] = True
        if lst:
            lst.close()
    import resource
    print(f"\n=== parent peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MiB")
    print(f"\n=== run took {time.monotonic() - start:.1f} s; run dir {run_dir}")
    for o in res.observations:
        print(f"--- {o['role']} {o['name']} {o.get('version')}: verdict={o['verdict']} fault={o['fault']}")
        print("    reason:", (o.get("reason") or "")[:1500].replace("\n", "\n    "))
    if a.abstract:
        print("abstract socket connections received:", got.get("conns"))
    ps = []
    for p in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"kernelsynth-s6-mark" in p.read_bytes() and int(p.parent.name) != os.getpid():
                ps.append(p.parent.name)
        except OSError:
            pass
    print("processes carrying kernelsynth-s6-mark after the run:", ps)
    shutil.rmtree(work, ignore_errors=True)
    if a.private:
        Path("/srv/kernelsynth-s6-secret").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
