"""Tunables override and sweep as the README writes them, without "+", on every hw: a pin wins
over the spec's interpreter settings and is what observations and records show; an unknown
name fails in one line listing the spec's tunables (issue 11, item 1)."""

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq

from conftest import FLIP2D, ROOT, compose
from kernelsynth import engine
from kernelsynth.hardware import Hardware
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration

CPU = Hardware(target="cpu", device_name="cpu (Triton interpreter)", interpret=True)


def _cli(*args, cwd=ROOT):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run([sys.executable, "-m", "kernelsynth", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=600)


def _configs(spec, hw=CPU, **kw):
    return {(j.row["version"], j.row["config"]) for j in Exploration(**kw).plan(spec, hw)}


def test_every_declared_tunable_overrides_without_plus():
    for name in ("BLOCK_M", "BLOCK_N", "num_warps"):
        assert compose([f"task.tunables.{name}=4"]).task.tunables[name] == 4
    conv = compose(["task=conv_relu_maxpool", "task.tunables.KPT=8", "task.tunables.BLOCK_W=[32,64]"]).task
    assert conv.tunables.KPT == 8 and list(conv.tunables.BLOCK_W) == [32, 64]
    spec = engine.load_task(compose(["task.tunables.BLOCK_N=256"]))
    assert spec.pinned == {"BLOCK_N": [256]} and all(c.tunables["BLOCK_N"] == [256] for c in spec.candidates)


def test_a_pin_wins_over_the_interpreter_settings():
    """Before: hw=cpu ran BLOCK_N=128 (spec interpret:) whatever was pinned."""
    plain = load_spec(FLIP2D / "spec.yaml")
    assert {json.loads(c)["BLOCK_N"] for _, c in _configs(plain)} == {128}  # the spec's interpreter tile
    pinned = load_spec(FLIP2D / "spec.yaml", tunables={"BLOCK_N": 256})
    configs = _configs(pinned)
    assert {json.loads(c)["BLOCK_N"] for _, c in configs} == {256}
    assert {json.loads(c)["BLOCK_M"] for _, c in configs} == {32}  # unpinned: still the interpreter's
    # a list of pins: every value runs, even with one config per candidate on the interpreter
    two = load_spec(FLIP2D / "spec.yaml", tunables={"BLOCK_N": [256, 512]})
    by_version = {}
    for v, c in _configs(two, interpreter_max_configs=1):
        by_version.setdefault(v, set()).add(json.loads(c)["BLOCK_N"])
    assert by_version == {"v0": {256, 512}, "v1": {256, 512}, "v2": {256, 512}, "v3": {256, 512}, "v4": {256, 512}, "v5": {256, 512}}


def test_unknown_tunable_fails_in_one_line_listing_the_spec_tunables(tmp_path):
    p = _cli("hw=cpu", "task.tunables.BLOCK_Q=256", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "task.tunables.BLOCK_Q" in lines[0] and "['BLOCK_M', 'BLOCK_N', 'num_warps']" in lines[0]


#: The README's sweep over a tunable (tests/test_readme.py RULES: hw=cpu, float32, 1 trial per shape).
README_SWEEP = "python -m kernelsynth -m hw=h200 task.tunables.BLOCK_N=512,1024,2048 hydra.sweep.dir=multirun/flip2d-h200"


def test_sweep_over_a_tunable_as_the_readme_writes_it_honours_each_pin_on_the_cpu(readme_runs):
    """The README's own sweep command, run once for this test and tests/test_readme.py
    (tests/conftest.py, readme_runs; without TRITON_INTERPRET in its environment: hw=cpu sets it)."""
    sweep = readme_runs.out_dir(README_SWEEP)
    for job, block_n in (("0", 512), ("1", 1024), ("2", 2048)):
        obs = pq.read_table(sweep / job / "observations.parquet").to_pylist()
        assert obs and {json.loads(o["config"])["BLOCK_N"] for o in obs} == {block_n}, (job, obs)
        assert all(o["verdict"] == "accepted" for o in obs)
        [rec] = pq.read_table(sweep / job / "dataset" / "data" / "train-00000-of-00001.parquet").to_pylist()
        assert {json.loads(v["config"])["BLOCK_N"] for v in rec["trajectory"]} == {block_n}
        assert json.loads(rec["provenance"]["config"])["task"]["tunables"]["BLOCK_N"] == block_n
