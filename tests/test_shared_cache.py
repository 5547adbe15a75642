"""The compile cache and the ceilings shared by processes at once (sweep jobs, runs, hosts on a
shared filesystem): several processes started together promote the same entries into one cache
root while another reads it, and measure ceilings into one ceilings.json. No torch, no GPU."""

import errno
import json
import os
import subprocess
import sys
import time

from conftest import ROOT

from kernelsynth import hardware

#: One child process: waits for the go file, then ``promote`` (N cubins and N Triton folders into
#: the root, as a run's parent does), ``read`` (every visible entry must be whole, until the stop
#: file), or ``ceilings`` (one fingerprint, a 1 s measurement that leaves a marker file).
CHILD = r'''
import json, os, sys, time
from pathlib import Path
from kernelsynth.cache import CompileCache, cubin_key, triton_folder_name
from kernelsynth.hardware import ceilings_entry

mode, root, go, n = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
SIZE = 2 << 20

def entry(i):
    side = {"source_sha256": "%064x" % i, "name": "k%d" % i, "arch": "sm_90", "options": ["-arch=sm_90"], "nvrtc": "12.8"}
    key = cubin_key(side)
    cubin = (b"cubin %06d " % i) * (SIZE // 13)
    h = "%064x" % (i + 1000)
    folder = triton_folder_name(h)
    t = "triton/%s/" % folder
    files = {"cuda/%s.cubin" % key: cubin, "cuda/%s.json" % key: json.dumps(side).encode(),
             t + "k.cubin": cubin, t + "k.json": json.dumps({"hash": h, "name": "k"}).encode(),
             t + "__grp__k.json": json.dumps({"child_paths": {"k.cubin": "/x/k.cubin", "k.json": "/x/k.json"}}).encode()}
    return key, folder, cubin, files

while not os.path.exists(go):
    time.sleep(0.002)
if mode == "promote":
    cache = CompileCache(root, sandboxed=True)
    for i in range(n):
        cache.receive({"files": entry(i)[3]}, "job %d" % i)
    print(json.dumps(cache.counts))
elif mode == "read":
    expected = {}
    for i in range(n):
        key, folder, cubin, _ = entry(i)
        expected[root / "cuda" / (key + ".cubin")] = cubin
        expected[root / "triton" / folder] = cubin
    seen, torn = set(), []
    while not os.path.exists(sys.argv[5]) or len(seen) < len(expected):
        for p, data in expected.items():
            if p.suffix == ".cubin" and p.is_file():
                size = p.stat().st_size  # cheap, so the poll is fast enough to catch a file being written
                got = p.read_bytes() if size == len(data) and p not in seen else data if size == len(data) else b"?" * size
            elif p.is_dir():  # a visible Triton folder is a whole one
                names = sorted(os.listdir(p))
                if names != ["__grp__k.json", "k.cubin", "k.json"]:
                    torn.append(f"{p.name}: {names}")
                    continue
                got = (p / "k.cubin").read_bytes()
            else:
                continue
            seen.add(p)
            if got != data:
                torn.append(f"{p.name}: {len(got)} of {len(data)} bytes")
        if os.path.exists(sys.argv[5]) and len(seen) < len(expected):
            break
    print(json.dumps({"seen": len(seen), "torn": torn[:5]}))
else:
    fp = sys.argv[5]
    def measure():
        (root / ("measured-%s-%d" % (fp, os.getpid()))).touch()
        time.sleep(1.0)
        return {"copy_gbps": 4000.0, "matmul_tflops": 700.0, "methods": []}
    print(json.dumps(ceilings_entry(fp, "dev", root, measure)))
'''


def _start(args, env):
    return subprocess.Popen([sys.executable, "-c", CHILD, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _results(procs, timeout=120):
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        assert p.returncode == 0, stderr[-2000:]
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def test_two_processes_promoting_one_cache_while_another_reads_it(tmp_path):
    """Two parents promote the same 12 cubins and 12 Triton folders (2 MiB files) into one root at once while a
    third process reads it: every entry is promoted whole (each Triton folder exactly once, the
    other copy counted a duplicate), the reader never sees part of an entry, and no temporary file
    is left."""
    n, root, go, stop = 12, tmp_path / "cache", tmp_path / "go", tmp_path / "stop"
    root.mkdir()
    env = _env()
    writers = [_start(["promote", root, go, n], env) for _ in range(2)]
    reader = _start(["read", root, go, n, stop], env)
    time.sleep(1.5)  # imports done: all three start together
    go.touch()
    counts = _results(writers)
    stop.touch()
    [read] = _results([reader])
    assert sum(c["refused"] + c["discarded"] for c in counts) == 0
    assert all(c["promoted"] + c["duplicates"] == 2 * n for c in counts)  # n cubins + n folders each
    folders = [d for d in (root / "triton").iterdir()]
    assert len(folders) == n and all(sorted(os.listdir(d)) == ["__grp__k.json", "k.cubin", "k.json"] for d in folders)
    for d in folders:  # the promoted group file names the folder's own files
        assert json.loads((d / "__grp__k.json").read_text())["child_paths"]["k.cubin"] == str(d / "k.cubin")
    cubins = sorted((root / "cuda").glob("*.cubin"))
    assert len(cubins) == n and len(list((root / "cuda").glob("*.json"))) == n
    assert all(p.stat().st_size == (2 << 20) // 13 * 13 for p in cubins)
    leftovers = [p.name for p in (root / "cuda").iterdir() if p.name.startswith(".")] + \
                [p.name for p in (root / "triton").iterdir() if p.name.startswith(".")]
    assert leftovers == []
    assert read["torn"] == [] and read["seen"] == 2 * n


def test_processes_measuring_ceilings_at_once_measure_each_fingerprint_once(tmp_path):
    """Three processes started together, two on one device fingerprint and one on another: each
    fingerprint is measured once (one marker), both entries are kept, and the two processes of the
    same device get the same entry."""
    root, go = tmp_path / "shared", tmp_path / "go"
    root.mkdir()
    env = _env()
    procs = [_start(["ceilings", root, go, 0, fp], env) for fp in ("dev-a", "dev-a", "dev-b")]
    time.sleep(1.5)
    go.touch()
    a1, a2, b = _results(procs)
    markers = sorted(p.name.rsplit("-", 1)[0] for p in root.glob("measured-*"))
    assert markers == ["measured-dev-a", "measured-dev-b"]
    assert a1 == a2 and a1["measured_at"] != b["measured_at"]
    assert sorted(json.loads((root / "ceilings.json").read_text())) == ["dev-a", "dev-b"]


def test_ceilings_on_a_filesystem_without_locks_still_measure_and_keep_other_entries(tmp_path, monkeypatch, caplog):
    """flock refused (Lustre mounted without -o flock: ENOLCK): a warning, the measurement, and the
    entries already in ceilings.json kept (the file is read again just before the write)."""
    (tmp_path / "ceilings.json").write_text(json.dumps({"other": {"copy_gbps": 1.0}}))

    def refused(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(hardware.fcntl, "flock", refused)
    entry = hardware.ceilings_entry("dev-a", "dev", tmp_path, lambda: {"copy_gbps": 4000.0, "matmul_tflops": 700.0})
    assert entry["copy_gbps"] == 4000.0 and "no lock on this filesystem" in caplog.text
    assert sorted(json.loads((tmp_path / "ceilings.json").read_text())) == ["dev-a", "other"]


def test_the_ceilings_lock_is_the_parents_own_and_a_held_lock_is_waited_for_a_bounded_time(tmp_path, monkeypatch, caplog):
    """tests/adversarial/sandbox_s7 flock_cache: ceilings.lock was readable in the sandbox (the
    shared cache is bound read-only), a read-only descriptor takes a flock, and the parent waited
    for it without a limit (another run's measurement stalled 14.5 s). Now 0600, and bounded."""
    import fcntl
    import logging
    import os

    from kernelsynth import hardware

    lock = tmp_path / "ceilings.lock"
    lock.write_text("")
    os.chmod(lock, 0o644)  # as an older run left it
    holder = open(lock)  # read-only: enough for a flock
    fcntl.flock(holder, fcntl.LOCK_EX)
    monkeypatch.setattr(hardware, "LOCK_WAIT_S", 0.5)
    caplog.set_level(logging.WARNING)
    try:
        entry = hardware.ceilings_entry("fp", "dev", tmp_path, lambda: {"copy_gbps": 1.0, "matmul_tflops": 2.0,
                                                                         "methods": {}})
    finally:
        holder.close()
    assert entry["copy_gbps"] == 1.0 and "still locked after" in caplog.text
    assert os.stat(lock).st_mode & 0o077 == 0
