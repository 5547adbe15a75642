"""Backends are a registry (kernelsynth/backends/): what each one declares, and a backend from
the tests folder that runs a task end to end on the CPU."""

import shutil

import datasets
import pytest
import yaml

from conftest import FIXTURES, FLIP2D, compose
from kernelsynth import backends, engine
from kernelsynth.errors import SpecError
from kernelsynth.spec import load_spec

TOY = FIXTURES / "toy_backend" / "backend.py"


def test_builtin_backends_declare_what_they_need():
    got = {n: (backends.get(n).needs_gpu, backends.get(n).screened, backends.get(n).launch,
               backends.get(n).language) for n in backends.BUILTIN}
    assert got == {"triton": (False, True, False, "python"), "torch": (False, True, False, "python"),
                   "torch_extension": (True, True, False, "python"), "cuda": (True, False, True, "cuda"),
                   "external": (False, True, False, "python"), "inductor": (False, True, False, "python")}
    with pytest.raises(KeyError, match="no backend named 'hip'"):
        backends.get("hip")
    with pytest.raises(ValueError, match="built in"):
        backends.register(backends.get("cuda"))


def test_no_backend_name_is_tested_outside_the_backends_package():
    """Adding a backend touches its own module only (issue 12 item 3)."""
    import re
    from pathlib import Path

    pkg = Path(backends.__file__).parent.parent
    offenders = []
    for f in pkg.rglob("*.py"):
        if "backends" in f.relative_to(pkg).parts:
            continue
        for i, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"backend\S*\s*([!=]=|(not )?in [(\[{])|backend: cuda", line):
                offenders.append(f"{f.relative_to(pkg)}:{i}: {line.strip()}")
    assert not offenders, offenders


def _toy_task(tmp_path, versions=None):
    """flip2d with one more rung, v9, built by the toy backend; ``versions``: the flip2d rungs kept
    (None: all)."""
    dst = tmp_path / "flip2d"
    shutil.copytree(FLIP2D, dst, ignore=shutil.ignore_patterns("__pycache__"))
    (dst / "kernels" / "toy.recipe").write_text("reverse dim=1\n")
    doc = yaml.safe_load((dst / "spec.yaml").read_text())
    if versions is not None:
        doc["candidates"] = [c for c in doc["candidates"] if c["version"] in versions]
    doc["candidates"].append({"version": "v9", "name": "toy_reverse", "backend": "toy",
                              "file": "kernels/toy.recipe", "technique": "the slices copied in reverse order",
                              "rationale": "a backend registered from the tests folder"})
    (dst / "spec.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return dst


def test_an_unknown_backend_is_a_spec_error_naming_the_field(tmp_path, monkeypatch):
    monkeypatch.delenv("KERNELSYNTH_BACKENDS", raising=False)
    with pytest.raises(SpecError) as e:
        load_spec(_toy_task(tmp_path) / "spec.yaml")
    assert e.value.field == f"candidates[{len(load_spec(FLIP2D / 'spec.yaml').candidates)}].backend"


def test_a_backend_from_the_tests_folder_runs_a_task_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELSYNTH_BACKENDS", str(TOY))
    # v0 and v1 of flip2d before v9: a ladder the toy rung ends, and a Triton version to compare its
    # protocol with (v2-v4 would add their interpreter time and nothing this test looks at)
    task = _toy_task(tmp_path, versions=("v0", "v1"))
    assert "toy" in backends.names() and backends.source("toy") == str(TOY.resolve())
    cfg = compose(["hw=cpu", "exploration.trials=2", "exploration.progress=false", "task.dtypes=[float32]",
                   f"task.spec={task}", f"cache_dir={tmp_path / 'cache'}"])
    result = engine.run(cfg, tmp_path / "run")
    obs = {o["version"]: o for o in result.observations}
    assert sorted(obs) == ["v0", "v1", "v9"]
    toy = obs["v9"]
    assert (toy["backend"], toy["verdict"], toy["fault"]) == ("toy", "accepted", "ok"), toy["reason"]
    assert toy["n_kernels"] == 1 and toy["compile_s"] == 0.0  # the backend's compile stats
    assert toy["reference_ops_used"] is None
    assert toy["trials"] == obs["v1"]["trials"] > 0  # the same protocol as the Triton versions
    # its "kernel" is copy_ of slices of the input, and flip2d moves data: since session 6 the
    # census counts that as a library doing the work, launched with no kernel of its own
    # (VERIFICATION.md rule 14, the red team's ff1), so it is labelled and makes no kernel record
    assert toy["aten_ops"] == "copy_,copy_(input),empty_like,select"
    assert toy["library_calls"] == "(no kernel of its own),copy_(input)"
    import pyarrow.parquet as pq

    (traj,) = pq.read_table(tmp_path / "run" / "trajectories.parquet").to_pylist()
    assert traj["accepted"] is False and traj["reasons"] == [
        "v9: library calls (operator(s) (no kernel of its own),copy_(input)): arithmetic done by a library, "
        "not a kernel record"]
