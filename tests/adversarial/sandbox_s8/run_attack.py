"""Run attacks of this folder as external flip2d candidates of one engine run on the CPU path
(hw=cpu, exploration.sandbox.mode=on: the real bubblewrap sandbox) and print each observation's
verdict, fault and reason, whether the run raised, how long the parent's Python threads stalled,
and the processes left:

    PYTHONPATH=$PWD python3 tests/adversarial/sandbox_s8/run_attack.py [--base DIR] [--creds]
        [--timeout S] [--extra FILE ...] ATTACK [ATTACK ...]

``--base DIR``: where the work folder (spec, attack copies), the cache and the run directory go
(default /srv; outside /tmp, which is private in the sandbox, and outside the home). For a
non-root run: ``mkdir /srv/sb8-nobody && chown nobody /srv/sb8-nobody`` and start this script
with ``runuser -u nobody -- env HOME=/srv/sb8-nobody/home PYTHONPATH=$PWD python3 ... --base
/srv/sb8-nobody``. ``--creds``: plant credentials outside the home, as a user or a CI job has
them: ``HF_HOME=<base>/sb8-hf`` whose ``token`` is written mode 0600 by huggingface_hub's own
secret writer, and ``GOOGLE_APPLICATION_CREDENTIALS=<base>/sb8-gcp/sa.json`` (mode 0644, as
``gcloud iam service-accounts keys create`` leaves it under umask 022). With PYTHONPATH=/work/main
(or any other checkout) the same command attacks that checkout's kernelsynth.
"""
import argparse
import os
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

from kernelsynth import engine  # noqa: E402


def compose(overrides):
    """The run's config from the conf/ of the kernelsynth imported (PYTHONPATH may name another checkout)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from kernelsynth.config import register_configs
    from kernelsynth.paths import CONF_DIR

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides))


def heartbeat(got):
    def beat():
        last = time.monotonic()
        while not got.get("stop"):
            time.sleep(0.05)
            now = time.monotonic()
            got["max_gap"] = max(got.get("max_gap", 0.0), now - last)
            last = now
    threading.Thread(target=beat, daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attacks", nargs="+")
    ap.add_argument("--base", default="/srv")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--creds", action="store_true")
    ap.add_argument("--extra", nargs="*", default=[])
    a = ap.parse_args()
    import kernelsynth
    print("kernelsynth from", Path(kernelsynth.__file__).parent, "uid", os.getuid(), flush=True)
    pid, base = os.getpid(), Path(a.base)
    work, cache, run_dir = base / f"sb8-work-{pid}", base / f"sb8-cache-{pid}", base / f"sb8-run-{pid}"
    work.mkdir(mode=0o755)
    os.chmod(work, 0o755)
    files = []
    for name in a.attacks:
        (work / f"{name}.py").write_text((HERE / f"{name}.py").read_text())
        files.append(work / f"{name}.py")
    honest = ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py"
    ref = ROOT / "specs" / "flip2d" / "reference.py"
    (work / "spec.yaml").write_text(
        f"name: sandbox_flip\ncategory: test_fixture\nreference: {ref}\ndims: [M, N]\n"
        "shapes:\n  verify: [[3, 5], [4, 67]]\ndtypes: [float32]\ncomparison: exact\n"
        "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\nreference_ops: [flip]\ncandidates:\n"
        f"  - {{version: v0, name: honest, file: {honest}, technique: index, rationale: honest}}\n")
    ext = [str(f) for f in files] + [e if e.startswith("/") else str(HERE / e) for e in a.extra]
    over = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.workers=1",
            "exploration.fresh_worker=external", "exploration.screen_sources=false",
            "exploration.sandbox.mode=on", "exploration.sandbox.nproc=128", "exploration.sandbox.fsize_mb=8",
            "exploration.sandbox.tmp_mb=96", f"exploration.timeout_s={a.timeout}", f"task.spec={work / 'spec.yaml'}",
            f"cache_dir={cache}", "exploration.extra_candidates=[" + ",".join(ext) + "]"]
    if a.creds:
        from huggingface_hub.utils import _auth
        hf, gcp = base / "sb8-hf", base / "sb8-gcp"
        hf.mkdir(exist_ok=True)
        gcp.mkdir(exist_ok=True)
        _auth._write_secret(hf / "token", "hf_sb8fileTOKEN0123456789")
        (gcp / "sa.json").write_text('{"type": "service_account", "private_key": "sb8-gcp-PRIVATE-KEY"}\n')
        os.chmod(gcp / "sa.json", 0o644)
        os.environ.update(HF_HOME=str(hf), HF_TOKEN="hf_sb8envTOKEN0123456789",
                          GOOGLE_APPLICATION_CREDENTIALS=str(gcp / "sa.json"))
        print(f"planted {hf}/token (mode {oct(os.stat(hf / 'token').st_mode & 0o777)}), {gcp}/sa.json (0644)")
    got = {}
    heartbeat(got)
    start, res = time.monotonic(), None
    try:
        res = engine.run(compose(over), run_dir)
    except BaseException as e:  # noqa: BLE001 - the evidence of a crashed run
        print(f"\n=== engine.run RAISED {type(e).__name__}: {str(e)[:300]}")
        traceback.print_exc(limit=-3)
    finally:
        got["stop"] = True
    print(f"=== longest stall of this process's Python threads: {got.get('max_gap', 0):.1f} s "
          f"(exploration.timeout_s={a.timeout}); run took {time.monotonic() - start:.1f} s; "
          f"run.json exists: {(run_dir / 'run.json').is_file()}")
    for o in res.observations if res else []:
        print(f"--- {o['role']} {o['name']}: verdict={o['verdict']} fault={o['fault']} wall_s={o.get('wall_s') or 0:.1f}")
        print("    reason:", (o.get("reason") or "")[:1200].replace("\n", "\n    "))
    if not res:
        import pyarrow.parquet as pq
        for f in sorted((run_dir / "observations").glob("*.parquet")):
            r = pq.read_table(f).to_pylist()[0]
            print(f"--- on disk: {r['role']} {r['name']}: verdict={r['verdict']} fault={r['fault']}")
    if (run_dir / "run.json").is_file():
        import json
        cc = json.loads((run_dir / "run.json").read_text()).get("compile_cache") or {}
        print("run.json compile_cache:", {k: v for k, v in cc.items() if k != "events"},
              [e["problem"][:90] for e in cc.get("events", [])][:4])
    print("files in the shared cache after the run:",
          sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()) if cache.is_dir() else None)
    time.sleep(2)
    left = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if str(cache) in cmd and int(p.name) != os.getpid():
                left.append((int(p.name), cmd.split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    print("processes of this run's workers alive 2 s after it ended:", left)
    for d in (work, cache, run_dir, base / "sb8-hf", base / "sb8-gcp"):
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
