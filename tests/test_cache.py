"""The shared compile cache (kernelsynth/cache.py, SECURITY.md "Compile caches"):
sandboxed workers read it read-only and stage new entries; the parent validates and promotes
them; a second run reuses them; an external candidate's entries are never promoted; entries
that do not check are refused with their reason. The engine runs go through the real sandbox."""

import json
import os
import time
from pathlib import Path

import pytest

from conftest import ROOT, compose
from kernelsynth import engine
from kernelsynth.cache import (MAX_FILE_BYTES, CompileCache, collect_staged, cubin_key, triton_folder_name)
from kernelsynth.sandbox import Sandbox, SandboxSettings

REFERENCE = ROOT / "specs" / "flip2d" / "reference.py"
COMPILES = ROOT / "tests" / "fixtures" / "cache" / "compiles.py"
POISON = ROOT / "tests" / "adversarial" / "sandbox" / "poison_cache.py"
RUN = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.workers=1",
       "exploration.screen_sources=false", "exploration.sandbox.mode=on", "exploration.timeout_s=120"]


def _sandbox_or_skip():
    box = Sandbox(SandboxSettings(mode="auto"))
    if not box.active:
        if os.environ.get("KERNELSYNTH_ALLOW_NO_SANDBOX") == "1":
            pytest.skip(f"no sandbox here and KERNELSYNTH_ALLOW_NO_SANDBOX=1: {box.problem}")
        pytest.fail(f"the sandbox cannot start ({box.problem}); install bubblewrap")


def _run(work: Path, name: str, extra=()):
    """One engine run of the spec in ``work`` on the cache ``work/cache``: (run.json,
    observations by name, seconds)."""
    start = time.monotonic()
    res = engine.run(compose(RUN + [f"task.spec={work / 'spec.yaml'}", f"cache_dir={work / 'cache'}", *extra]),
                     work / name)
    return (json.loads((work / name / "run.json").read_text()), {o["name"]: o for o in res.observations},
            time.monotonic() - start)


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """A run on an empty cache of a spec candidate that compiles a Triton kernel and gets a cubin
    (tests/fixtures/cache/compiles.py), with the external attack poison_cache.py: (work folder,
    run.json, observations by name, seconds)."""
    _sandbox_or_skip()
    work = tmp_path_factory.mktemp("cache")
    os.chmod(work, 0o755)  # readable by the workers' own uids
    (work / "spec.yaml").write_text(
        f"name: cache_flip\ncategory: test_fixture\nreference: {REFERENCE}\ndims: [M, N]\n"
        "shapes:\n  verify: [[3, 5]]\n  derived: false\ndtypes: [float32]\ncomparison: exact\n"
        "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\nreference_ops: [flip]\ncandidates:\n"
        f"  - {{version: v0, name: compiles, file: {COMPILES}, technique: index, rationale: compiles}}\n")
    return (work, *_run(work, "cold", [f"exploration.extra_candidates=[{POISON}]"]))


@pytest.fixture(scope="module")
def warm(cold):
    """A second run of the same spec (without the attack) on the cache the cold run filled."""
    return _run(cold[0], "warm")


def _attack():
    import importlib.util

    spec = importlib.util.spec_from_file_location("poison_cache", POISON)
    attack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attack)  # its names (KEY, FOLDER, LINK); the attack runs only when built
    return attack


def test_an_external_candidate_cannot_poison_the_shared_cache(cold):
    work, run, obs, seconds = cold
    cache, attack = work / "cache", _attack()
    o = obs["poison_cache"]
    # accepted: it flips correctly, and it returns zeros when a write into the shared cache succeeds
    assert o["verdict"] == "accepted", o["reason"]
    events = run["compile_cache"]["events"]
    discarded = [e for e in events if e["problem"] == "not promoted: the worker ran the external candidate poison_cache"]
    assert len(discarded) == 1 and f"cuda/{attack.KEY}.cubin" in discarded[0]["entries"], events
    assert f"triton/{attack.FOLDER}/evil.cubin" in discarded[0]["entries"]
    assert any(e["entry"] == f"cuda/{attack.LINK}.cubin" and "a symlink (to /etc/hostname)" in e["problem"]
               for e in events), events
    assert not (cache / "cuda" / f"{attack.KEY}.cubin").exists() and not (cache / "triton" / attack.FOLDER).exists()
    assert [e["job"] for e in events if "compiles" in e["job"]] == [], events  # the attack's events are its own
    assert seconds < 300


def test_a_warm_cache_is_reused_and_nothing_is_recompiled(cold, warm):
    work, c_run, c_obs, _ = cold
    w_run, w_obs, seconds = warm
    cache = work / "cache"
    for obs in (c_obs, w_obs):
        assert obs["compiles"]["verdict"] == "accepted", obs["compiles"]["reason"]
    c, w = c_run["compile_cache"], w_run["compile_cache"]
    assert c["staged"] is True and c["root"] == str(cache.resolve())
    # cold: the Triton compile and the cubin missed once each, and both were promoted into the
    # shared cache by the parent
    assert (c["misses"], c["promoted"], c["shared_hits"]) == (2, 2, 0), c
    # warm: every lookup is found in the shared cache; nothing compiled, staged or refused
    assert (w["misses"], w["staged_hits"], w["promoted"], w["refused"], w["events"]) == (0, 0, 0, 0, []), w
    assert w["shared_hits"] >= 2, w
    cubins = sorted(p.name for p in (cache / "cuda").iterdir())
    assert len(cubins) == 2 and cubins[0].endswith(".cubin") and cubins[1].endswith(".json"), cubins
    side = json.loads((cache / "cuda" / cubins[1]).read_text())
    assert cubin_key(side) + ".json" == cubins[1] and side["name"] == "stand_in"
    (folder,) = list((cache / "triton").iterdir())
    group = json.loads((folder / "__grp___double.json").read_text())["child_paths"]
    assert all(Path(p).parent == folder and Path(p).is_file() for p in group.values()), group  # rewritten
    meta = json.loads((folder / "_double.json").read_text())
    assert triton_folder_name(meta["hash"]) == folder.name and meta["target"]["arch"] == 90
    assert oct((cache / "cuda" / cubins[0]).stat().st_mode & 0o777) == "0o644"
    assert seconds < 300


# ------------------------------------------------------------------------------ the parent's checks
def _cubin_pair(name="k"):
    side = {"source_sha256": "0" * 64, "name": name, "arch": "sm_90", "options": ["-arch=sm_90"], "nvrtc": "12.8"}
    key = cubin_key(side)
    return key, {f"cuda/{key}.cubin": b"\x7fELF cubin", f"cuda/{key}.json": json.dumps(side).encode()}


def _triton_entry(hash_hex="ab" * 32, name="k", meta_hash=None):
    folder = triton_folder_name(hash_hex)
    files = {f"triton/{folder}/{name}.cubin": b"\x7fELF", f"triton/{folder}/{name}.json":
             json.dumps({"hash": meta_hash or hash_hex, "name": name}).encode(),
             f"triton/{folder}/__grp__{name}.json": json.dumps({"child_paths": {
                 f"{name}.cubin": f"/tmp/staging/triton/{folder}/{name}.cubin",
                 f"{name}.json": f"/tmp/staging/triton/{folder}/{name}.json"}}).encode()}
    return folder, files


def test_staged_entries_that_do_not_check_are_refused_with_their_reason(tmp_path):
    cache = CompileCache(tmp_path / "c", sandboxed=True)
    good_key, good = _cubin_pair("good")
    folder, triton_good = _triton_entry()
    bad_key, bad_side = _cubin_pair("bad")
    bad_side[f"cuda/{bad_key}.json"] = bad_side[f"cuda/{bad_key}.json"].replace(b'"bad"', b'"other"')
    lone_key, lone = _cubin_pair("lone")
    bad_hash_folder, bad_hash = _triton_entry("cd" * 32, meta_hash="ef" * 32)
    unparsable_folder, unparsable = _triton_entry("12" * 32)
    unparsable[f"triton/{unparsable_folder}/k.json"] = b"{not json"
    files = {**good, **triton_good, **bad_side, f"cuda/{lone_key}.cubin": lone[f"cuda/{lone_key}.cubin"],
             **bad_hash, **unparsable, "cuda/../../etc/passwd": b"x", "cuda/NOTHEX.cubin": b"x",
             f"cuda/{'a' * 64}.so": b"x", "evil.py": b"x", f"cuda/{'b' * 64}.cubin": b"x" * (MAX_FILE_BYTES + 1)}
    cache.receive({"files": files, "refused": [("cuda/x.cubin", "a symlink (to /etc/shadow)")],
                   "counts": {"misses": 3, "shared_hits": -5, "bogus": 9}}, job="candidate v0 float32")
    problems = {e["entry"]: e["problem"] for e in cache.events}
    assert "its sidecar hashes to" in problems[f"cuda/{bad_key}.cubin"]
    assert "without its sidecar" in problems[f"cuda/{lone_key}.cubin"]
    assert "is not its folder name" in problems[f"triton/{bad_hash_folder}"]
    assert "does not parse" in problems[f"triton/{unparsable_folder}"]
    for name in ("cuda/../../etc/passwd", "cuda/NOTHEX.cubin", f"cuda/{'a' * 64}.so", "evil.py"):
        assert "does not match the cache's layout" in problems[name], name
    assert "over the limit" in problems[f"cuda/{'b' * 64}.cubin"]
    assert problems["cuda/x.cubin"] == "refused in the worker: a symlink (to /etc/shadow)"
    # the valid ones were promoted, and only they: files the parent wrote, group paths rewritten
    root = tmp_path / "c"
    assert sorted(p.name for p in (root / "cuda").iterdir()) == sorted([f"{good_key}.cubin", f"{good_key}.json"])
    assert sorted(p.name for p in (root / "triton").iterdir()) == [folder]
    group = json.loads((root / "triton" / folder / "__grp__k.json").read_text())["child_paths"]
    assert group == {n: str(root / "triton" / folder / n) for n in ("k.cubin", "k.json")}
    assert (cache.counts["promoted"], cache.counts["misses"], cache.counts["shared_hits"]) == (2, 3, 0)
    # the same entries again (another worker compiled them too): duplicates, nothing rewritten
    cache.receive({"files": {**good, **triton_good}}, job="candidate v1 float32")
    assert (cache.counts["promoted"], cache.counts["duplicates"]) == (2, 2)


def test_a_tainted_workers_entries_are_discarded_and_recorded(tmp_path):
    cache = CompileCache(tmp_path / "c", sandboxed=True)
    key, files = _cubin_pair()
    cache.receive({"files": files}, job="external x float32", taint="ran the external candidate x")
    assert not (tmp_path / "c" / "cuda" / f"{key}.cubin").exists()
    (event,) = cache.events
    assert event["problem"] == "not promoted: the worker ran the external candidate x"
    assert event["entries"] == sorted(files) and cache.counts["discarded"] == 2


def test_the_worker_packs_regular_files_only_and_empties_its_staging(tmp_path):
    staging = tmp_path / "staging"
    (staging / "cuda").mkdir(parents=True)
    (staging / "cuda" / "a.cubin").write_bytes(b"cubin")
    (staging / "cuda" / "link.cubin").symlink_to("/etc/hostname")
    os.mkfifo(staging / "cuda" / "fifo.cubin")
    packed = collect_staged(str(staging))
    assert packed["files"] == {"cuda/a.cubin": b"cubin"}
    assert dict(packed["refused"]) == {"cuda/link.cubin": "a symlink (to /etc/hostname)",
                                       "cuda/fifo.cubin": "not a regular file"}
    assert list(staging.iterdir()) == []


def test_unsandboxed_workers_write_the_shared_cache_directly(tmp_path, monkeypatch):
    from kernelsynth import cache as cache_mod
    from kernelsynth.backends.cuda import cached_cubin

    env = CompileCache(tmp_path / "c", sandboxed=False).worker_env()
    assert "KERNELSYNTH_CACHE_STAGING" not in env and env["TRITON_CACHE_DIR"] == str(tmp_path / "c" / "triton")
    monkeypatch.setenv("KERNELSYNTH_CACHE", env["KERNELSYNTH_CACHE"])
    monkeypatch.delenv("KERNELSYNTH_CACHE_STAGING", raising=False)
    side = {"source_sha256": "1" * 64, "name": "k", "arch": "sm_90", "options": [], "nvrtc": "x"}
    before = dict(cache_mod.COUNTS)
    assert cached_cubin(side, lambda: b"bin")[1:] == (b"bin", False)
    assert (tmp_path / "c" / "cuda" / f"{cubin_key(side)}.cubin").read_bytes() == b"bin"
    assert cached_cubin(side, lambda: pytest.fail("compiled twice"))[1:] == (b"bin", True)
    assert cache_mod.COUNTS["misses"] - before["misses"] == 1 and cache_mod.COUNTS["shared_hits"] - before["shared_hits"] == 1


@pytest.mark.gpu
@pytest.mark.skipif(os.environ.get("KERNELSYNTH_TEST_GPU") != "1", reason="needs KERNELSYNTH_TEST_GPU=1 and a CUDA GPU")
def test_on_the_gpu_a_warm_cache_compiles_nothing_and_keeps_the_verdicts(tmp_path):
    """conv_relu_maxpool (Triton and NVRTC candidates) twice on one cache, through the sandbox."""
    runs = []
    for name in ("cold", "warm"):
        cfg = compose(["hw=auto", "exploration.progress=false", "exploration.trials=1", "exploration.baselines=false",
                       "task=conv_relu_maxpool", "task.dtypes=[float32]", f"cache_dir={tmp_path / 'cache'}"])
        res = engine.run(cfg, tmp_path / name)
        runs.append((json.loads((tmp_path / name / "run.json").read_text()),
                     {(o["version"], o["config"]): o for o in res.observations}))
    (cold, cold_obs), (warm, warm_obs) = runs
    assert cold["sandbox"]["active"] and cold["compile_cache"]["promoted"] > 0, cold["compile_cache"]
    assert cold["compile_cache"]["refused"] == 0 and cold["compile_cache"]["events"] == [], cold["compile_cache"]
    assert warm["compile_cache"]["misses"] == 0 and warm["compile_cache"]["promoted"] == 0, warm["compile_cache"]
    assert {k: o["verdict"] for k, o in warm_obs.items()} == {k: o["verdict"] for k, o in cold_obs.items()}
    cuda = [o for o in warm_obs.values() if o["backend"] == "cuda"]
    assert cuda and all(o["compile_cached"] for o in cuda), [(o["version"], o["compile_cached"]) for o in cuda]
    assert not all(o["compile_cached"] for o in cold_obs.values() if o["backend"] == "cuda")  # compiled cold


def test_a_triton_folder_with_a_file_no_group_lists_is_refused(tmp_path):
    cache = CompileCache(tmp_path / "c", sandboxed=True)
    folder, files = _triton_entry()
    files[f"triton/{folder}/extra.so"] = b"\x7fELF"
    cache.receive({"files": files}, job="candidate v0 float32")
    (event,) = cache.events
    assert event["entry"] == f"triton/{folder}" and "files no group file lists: extra.so" in event["problem"]
    assert list((tmp_path / "c" / "triton").iterdir()) == []
