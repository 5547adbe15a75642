"""The whole pipeline on the CPU (Triton interpreter): dataset, isolation, resume, CLI errors."""

import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, compose
from kernelsynth import engine

FAST = ["hw=cpu", "exploration.trials=2", "exploration.progress=false"]


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    cfg = compose(FAST + ["task=flip2d", "task.dtypes=[float32,bfloat16]", f"cache_dir={run_dir / 'cache'}"])
    return engine.run(cfg, run_dir)


def test_cpu_run_writes_a_dataset_that_loads_with_the_declared_schema(cpu_run):
    import datasets

    from kernelsynth.records import FEATURES

    ds = datasets.load_dataset(str(cpu_run.dataset_dir), split="train")
    assert ds.features == FEATURES
    assert sorted(ds["dtype"]) == ["bfloat16", "float32"]
    rec = ds[0]
    assert rec["task"] == "flip2d" and rec["hardware"]["interpret"] is True
    assert rec["verification"]["performance_verified"] is False and rec["verification"]["passed"] is True
    assert [v["version"] for v in rec["trajectory"]] == ["v0", "v1", "v2", "v3", "v4", "v5"]
    # trials x interpreter shapes (7 since session 35's 37x8), + once each: 1x4097, 2 fresh, one with M large and ragged, and
    # rule 12's 2 residue shapes on the interpreter (odd and one other residue per dim, shapes.RESIDUE_PLAN:
    # at seed 0 a large 2 mod 4 value of M and a 4 mod 8 one of N), the even and the aligned shape (shapes.even_shape)
    assert rec["verification"]["trials"] == 2 * 7 + 6 + 2
    assert "N - 1 - cols" in rec["trajectory"][1]["code"]
    assert rec["answer_code"] == rec["trajectory"][-1]["code"]
    assert rec["metrics"]["best_ms"] is None  # no timings on the interpreter
    assert [m["role"] for m in rec["messages"]] == ["system", "user", "assistant"]
    assert rec["provenance"]["spec_sha256"] == cpu_run.spec.sha256
    card = (cpu_run.dataset_dir / "README.md").read_text()
    assert "configs:" in card and "data/train-*.parquet" in card


def test_observations_are_on_disk_one_per_job(cpu_run):
    import pyarrow.parquet as pq

    shards = list((cpu_run.run_dir / "observations").glob("*.parquet"))
    assert len(shards) == 2 * 6  # dtypes x candidates v0-v5 (one config each on the interpreter)
    table = pq.read_table(cpu_run.run_dir / "observations.parquet")
    assert table.num_rows == 12 and set(table.column("verdict").to_pylist()) == {"accepted"}
    assert json.loads((cpu_run.run_dir / "run.json").read_text())["records"] == 2


def test_rerun_in_the_same_directory_skips_finished_work_and_gives_the_same_records(cpu_run):
    import datasets

    before = datasets.load_dataset(str(cpu_run.dataset_dir), split="train")["id"]
    shard = next((cpu_run.run_dir / "observations").glob("*.parquet"))
    mtime = shard.stat().st_mtime_ns
    cfg = compose(FAST + ["task=flip2d", "task.dtypes=[float32,bfloat16]", f"cache_dir={cpu_run.run_dir / 'cache'}"])
    again = engine.run(cfg, cpu_run.run_dir)
    assert shard.stat().st_mtime_ns == mtime
    assert datasets.load_dataset(str(again.dataset_dir), split="train")["id"] == before


def test_faulty_kernels_become_rejected_observations(tmp_path):
    cfg = compose(FAST + [f"task.spec={FIXTURES / 'faulty'}"])
    res = engine.run(cfg, tmp_path)
    by_version = {o["version"]: o for o in res.observations}
    assert by_version["v0"]["verdict"] == "accepted"
    assert by_version["v1"]["fault"] == "exception" and "deliberate failure" in by_version["v1"]["reason"]
    assert by_version["v2"]["fault"] == "compile_error" and "power of 2" in by_version["v2"]["reason"]
    assert by_version["v3"]["fault"] in ("crashed", "exception", "cuda_error")  # the interpreter segfaults
    assert by_version["v4"]["fault"] == "wrong_output" and "not bit-exact" in by_version["v4"]["reason"]
    assert by_version["v5"]["fault"] == "exception" and "ImportError" in by_version["v5"]["reason"]
    assert by_version["v6"]["fault"] == "oom"
    assert [t["accepted"] for t in res.trajectories] == [False]


def test_process_faults_cost_one_worker_each_and_the_run_completes(tmp_path):
    cfg = compose(FAST + [f"task.spec={FIXTURES / 'process_faults'}", "exploration.timeout_s=20",
                          "exploration.screen_sources=false"])  # v8 imports gc: it must reach the worker
    res = engine.run(cfg, tmp_path)
    faults = {o["version"]: o["fault"] for o in res.observations}
    assert faults == {"v0": "ok", "v1": "crashed", "v2": "exit_called", "v3": "crashed", "v4": "timeout",
                      "v5": "ok", "v6": "wrong_output", "v7": "ok", "v8": "timeout"}
    reasons = {o["version"]: o["reason"] for o in res.observations}
    assert "exited with code 3" in reasons["v1"] and "signal 9" in reasons["v3"]
    # v6's threads keep starting threads after its job; v7 (honest) ran on a fresh worker. Seen on the
    # H200 with torch.compile's compile-pool timer threads, which falsely rejected the next v0.
    assert "thread(s) started by the candidate still running" in reasons["v6"], reasons["v6"]
    assert "did not arrive complete" in reasons["v8"], reasons["v8"]  # a forged header did not hang the parent


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kernelsynth", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=300)


def test_cli_user_error_is_one_message_without_traceback(tmp_path):
    bad = tmp_path / "spec.yaml"
    bad.write_text("name: broken\n")
    p = _cli("hw=cpu", f"task.spec={bad}", f"hydra.run.dir={tmp_path / 'run'}")
    assert p.returncode == 2
    assert f"{bad}: field 'reference': expected a value" in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_missing_spec_path(tmp_path):
    p = _cli("hw=cpu", "task.spec=/no/such/spec.yaml", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2 and "/no/such/spec.yaml" in p.stderr and "Traceback" not in p.stderr


def test_cli_misspelled_config_key_fails_at_start(tmp_path):
    """README: a misspelled key named with the closest setting, exit status 2 (session 29; Hydra's own message,
    exit status 1, before), a wrong type with Hydra's message, exit status 1; no traceback, nothing run."""
    p = _cli("hw=cpu", "exploration.trails=3", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2 and "did you mean exploration.trials?" in p.stderr and "Traceback" not in p.stderr
    p = _cli("hw=cpu", "exploration.trials=abc", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 1 and "'abc'" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "observations").exists()


def test_two_dataset_folders_of_the_same_name_load_their_own_records(cpu_run, tmp_path):
    """Regression: datasets caches local folders by (folder name, config name); with a fixed
    config name the second folder called "dataset" loaded the first one's rows."""
    import datasets

    from kernelsynth.stages.synthesis import Synthesis

    one = [t for t in cpu_run.trajectories if t["dtype"] == "float32"]
    out = Synthesis().run(cpu_run.spec, cpu_run.hardware, one, cpu_run.observations, tmp_path, cpu_run_config())
    assert out.name == cpu_run.dataset_dir.name == "dataset"
    assert datasets.load_dataset(str(cpu_run.dataset_dir), split="train").num_rows == 2
    assert datasets.load_dataset(str(out), split="train")["dtype"] == ["float32"]


def cpu_run_config():
    from omegaconf import OmegaConf

    return OmegaConf.to_container(compose(FAST), resolve=True)


def test_cli_appended_unknown_stage_setting_fails_before_any_work(tmp_path):
    """Hydra's schema refuses exploration.trails=3 and suggests +exploration.trails=3, which got
    past it to Exploration.__init__ ("unexpected keyword argument 'trails'", session 8's fresh clone)."""
    p = _cli("hw=cpu", "+exploration.trails=3", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith(
        "kernelsynth: error: exploration.trails is not a setting of exploration; did you mean exploration.trials? "
        "(valid: trials, timing_shape_trials, seed,"), p.stderr
    assert "unexpected keyword" not in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "observations").exists()
    # without the '+': Hydra refused it with "To append to your config use +exploration.trails=3", a hint that
    # led a new user (session 29) to the error above; the CLI now answers with the valid names at once
    p = _cli("hw=cpu", "exploration.trails=3", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith(
        "kernelsynth: error: exploration.trails is not a setting of exploration; did you mean exploration.trials? "), \
        p.stderr
    assert "append" not in p.stderr and "Traceback" not in p.stderr


def test_unknown_overrides_look_only_where_the_schema_declares_the_level():
    from kernelsynth.config import unknown_overrides

    ok = ["-m", "task=flip2d,conv_relu_maxpool", "hw=cpu", "task.dtypes=[float32]", "task.tunables.BLOCK_N=256",
          "exploration.sandbox.mode=on", "hydra.run.dir=x=y", "hydra/launcher=ray_cluster", "+exploration.trails=3",
          "++selection.min_speed=2", "~publish.repo_id", "publish.repo_id=a/b", "verbose=true"]
    assert unknown_overrides(ok) == []
    found = unknown_overrides(["exploration.sandbox.mod=on", "trials=4", "selection.min_speed=2"])
    assert [k for k, _ in found] == ["exploration.sandbox.mod", "trials", "selection.min_speed"]
    assert "mode" in found[0][1] and "exploration" in found[1][1] and "min_speedup" in found[2][1]


@pytest.mark.parametrize("terminal, progress, shown", [(False, True, False), (True, True, True), (True, False, False)])
def test_the_progress_bar_is_drawn_on_a_terminal_only(terminal, progress, shown):
    """A console that is not a terminal (a log file, a pipe) got the bar's last state as one stray
    line at the end of exploration ("exploration   v3 wide_words int32 {...}", session 8's fresh clone)."""
    from io import StringIO

    from rich.console import Console

    from kernelsynth.stages.exploration import Exploration

    buf = StringIO()
    with Exploration(progress=progress).progress_bar(Console(file=buf, force_terminal=terminal, width=100)) as bar:
        task = bar.add_task("", total=2)
        bar.update(task, description="v3 wide_words int32")
        bar.advance(task)
    assert ("exploration" in buf.getvalue() and "v3 wide_words int32" in buf.getvalue()) == shown, buf.getvalue()
    if not shown:
        assert buf.getvalue() == ""


def test_unknown_settings_name_each_key_added_past_the_schema_with_the_valid_ones():
    from kernelsynth.config import unknown_settings, unknown_settings_message

    assert unknown_settings(compose(["hw=cpu"])) == []
    cfg = compose(["hw=cpu", "++exploration.sandbox.mod=on", "+selection.min_speed=2", "+task.dtype=[float32]",
                   "+verbos=true", "exploration.trials=2"])
    found = unknown_settings(cfg)
    assert [k for k, _ in found] == ["task.dtype", "exploration.sandbox.mod", "selection.min_speed", "verbos"]
    lines = unknown_settings_message(found).splitlines()
    assert lines[0] == "task.dtype is not a setting of task; did you mean task.dtypes? " \
                       "(valid: name, spec, search_path, tunables, dtypes)"
    assert lines[1].startswith("exploration.sandbox.mod is not a setting of exploration.sandbox; did you mean "
                               "exploration.sandbox.mode? (valid: mode, bwrap,")
    assert lines[2] == "selection.min_speed is not a setting of selection; did you mean selection.min_speedup? " \
                       "(valid: min_speedup, max_timing_spread, require_all_configs_correct)"
    assert lines[3].startswith("verbos is not a setting of the config; did you mean verbose? (valid: task, hw,")


def test_resume_key_covers_kernel_files_outside_the_spec_folder(tmp_path, monkeypatch):
    """Regression: the key hashed only the spec folder, so an edited kernel living elsewhere kept
    its old 'accepted' observation on resume. Also: an interpreter run starts no hardware probe
    worker (its facts are the parent's: kernelsynth.hwprobe.interpreter_facts; the exploration's
    worker checks the reference, test_cli_reference_that_does_not_import_is_one_spec_error)."""
    import shutil

    def no_probe(*a, **k):
        raise AssertionError("an interpreter run started the probe worker")

    monkeypatch.setattr(engine, "probe_hardware", no_probe)

    spec_dir, ext = tmp_path / "spec", tmp_path / "ext"
    spec_dir.mkdir()
    ext.mkdir()
    kernel = ext / "k.py"
    shutil.copy(ROOT / "specs" / "flip2d" / "kernels" / "v1_single_pass.py", kernel)
    (spec_dir / "spec.yaml").write_text(
        f"name: outside\nreference: {ROOT / 'specs' / 'flip2d' / 'reference.py'}\ndims: [M, N]\n"
        "shapes: {verify: [[3, 5]]}\ndtypes: [float32]\nwork: {bytes: '2 * M * N * itemsize'}\nbaselines: []\n"
        f"candidates:\n  - {{version: v0, name: k, file: {kernel}, technique: t, rationale: r,"
        " tunables: {BLOCK_M: [1], BLOCK_N: [128], num_warps: [4]}}\n")
    overrides = FAST + [f"task.spec={spec_dir}"]
    assert engine.run(compose(overrides), tmp_path / "run").observations[0]["verdict"] == "accepted"
    kernel.write_text(kernel.read_text().replace("tl.store(Y + rows * N + cols, vals, mask=mask)",
                                                 "tl.store(Y + rows * N + cols, vals * 2, mask=mask)"))
    obs = engine.run(compose(overrides), tmp_path / "run").observations
    assert sorted(o["verdict"] for o in obs if o["version"] == "v0") == ["accepted", "rejected"]


@pytest.mark.parametrize("source, expected", [
    ("import no_such_module_anywhere\n", "ModuleNotFoundError"),
    ("def get_inputs(shape, dtype, device, generator):\n    return []\n", "defines no Model, get_init_inputs"),
    # session 23's attack: a reference that ends its worker gave a traceback, exit 1 and an empty store
    ("import os\nos._exit(3)\n", "importing it ended the worker (crashed: worker process exited with code 3"),
    # ... and a megabyte-long, many-line message was printed whole
    ("raise RuntimeError('line\\n' * 200000)\n", "RuntimeError: line line line"),
    # a reference that hangs while importing ended the run only after exploration.timeout_s (600 s)
    ("import time\ntime.sleep(900)\n", "importing it ended the worker (timeout: no result within 15 s"),
])
def test_cli_reference_that_does_not_import_is_one_spec_error(flip2d_copy, tmp_path, source, expected):
    (flip2d_copy / "reference.py").write_text(source)
    # the hang's limit: the worker's start (a torch import, seconds on a loaded 2-core CI machine) counts too
    # with the inductor source the check runs before the extraction, whose folder an empty run left behind
    p = _cli("hw=cpu", f"task.spec={flip2d_copy}", f"hydra.run.dir={tmp_path / 'run'}", "exploration.sources=[ladder,inductor]",
             *(["exploration.reference_timeout_s=15"] if "sleep" in source else []))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("kernelsynth: error:")]
    assert f"{flip2d_copy / 'spec.yaml'}: field 'reference'" in line and expected in line and len(line) < 1500
    assert not (tmp_path / "run" / "observations").exists()
    assert not (tmp_path / "run" / ".observation-key").exists()
    assert not (tmp_path / "run" / "inductor").exists()


def test_external_candidates_from_files_folders_and_tables_get_verdicts(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cheats = ROOT / "tests" / "adversarial" / "cpu"
    table = tmp_path / "outputs.jsonl"
    table.write_text("\n".join(json.dumps(r) for r in [
        {"id": "model-a", "source": (cheats / "honest" / "index.py").read_text()},
        {"id": "model-b", "source": (cheats / "distribution" / "range_only.py").read_text()},
    ]))
    pq.write_table(pa.table({"code": [(cheats / "honest" / "gather.py").read_text()]}), tmp_path / "more.parquet")
    extra = [str(table), str(tmp_path / "more.parquet"), str(cheats / "determinism" / "reused_buffer.py")]
    cfg = compose(FAST + ["task.dtypes=[float32]", f"exploration.extra_candidates=[{','.join(extra)}]"])
    res = engine.run(cfg, tmp_path / "run")
    ext = {o["version"]: o for o in res.observations if o["role"] == "external"}
    assert {k: v["verdict"] for k, v in ext.items()} == {
        "outputs/model-a": "accepted", "outputs/model-b": "rejected", "more/0": "accepted", "reused_buffer": "rejected"}
    assert "trial 1" in ext["outputs/model-b"]["reason"]
    assert [t["accepted"] for t in res.trajectories] == [True]  # the spec's ladder is judged as before


def test_cli_missing_external_candidate_path(tmp_path):
    p = _cli("hw=cpu", "exploration.extra_candidates=[/no/such/kernel.py]", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2 and "/no/such/kernel.py does not exist" in p.stderr


def test_version_verdicts_untimed(cpu_run):
    """Regression: without timings every version was labelled 'baseline'."""
    import datasets

    rec = datasets.load_dataset(str(cpu_run.dataset_dir), split="train")[0]
    assert [v["verdict"] for v in rec["trajectory"]] == ["baseline"] + ["verified"] * 5


def test_version_verdicts_timed_name_the_leader(cpu_run):
    """A later version slower than the leader is 'no gain' over the leader, not over its predecessor."""
    from kernelsynth.records import build_record

    traj = next(t for t in cpu_run.trajectories if t["dtype"] == "float32")
    by_key = {o["key"]: dict(o) for o in cpu_run.observations}
    for key, ms in zip(traj["observation_keys"], (2.0, 1.0, 1.5, 1.2, 1.1, 1.05)):  # v0, v1 (leader), v2-v5 (slower)
        by_key[key].update(median_ms=ms, p20_ms=ms, p80_ms=ms, achieved_gbps=1.0, pct_of_copy_ceiling=1.0)
    rec = build_record(cpu_run.spec, cpu_run.hardware, traj, by_key, cpu_run_config(), "sys")
    assert [v["verdict"] for v in rec["trajectory"]] == ["baseline", "improved"] + ["no gain"] * 4
    assert "No gain over v1 (1.0000 ms)" in rec["trajectory_text"]
    assert rec["metrics"]["best_version"] == "v1" and rec["metrics"]["speedup_vs_v0"] == 2.0


def test_cli_reference_whose_model_always_raises_is_named_broken_not_a_shape_rule(flip2d_copy, tmp_path):
    """Session 23's attack (D3): a Model whose constructor always raises passes the name check and fails in
    the oracle, which advised stating a shape rule; on the spec's first listed shape the reference itself is
    broken. One line, exit 2, and the fresh run directory keeps no empty store."""
    ref = flip2d_copy / "reference.py"
    ref.write_text(ref.read_text().replace('    """y[i, j] = x[i, N - 1 - j] for x of shape (M, N), any dtype."""\n',
                                           "    def __init__(self):\n        raise ValueError('ctor boom')\n"))
    p = _cli("hw=cpu", f"task.spec={flip2d_copy}", "exploration.trials=1", "task.dtypes=[float32]",
             f"hydra.run.dir={tmp_path / 'run'}")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("kernelsynth: error:")]
    assert "ValueError: ctor boom" in line and "the reference itself fails" in line and "constraints" not in line
    assert not (tmp_path / "run" / "observations").exists()


def test_cli_reference_whose_get_inputs_ignores_a_dim_stops_the_run(flip2d_copy, tmp_path):
    """Session 23's attack (D4): a get_inputs that ignores N makes every verify shape with the same M one
    problem under several names -- the ragged, large and residue values of N never reach the reference or
    the candidate, and such a spec was accepted. The oracle names the two shapes and the dim; one line,
    exit 2, no store left behind."""
    ref = flip2d_copy / "reference.py"
    ref.write_text(ref.read_text().replace('size = (shape["M"], shape["N"])', 'size = (shape["M"], 24)'))
    p = _cli("hw=cpu", f"task.spec={flip2d_copy}", "exploration.trials=1", "task.dtypes=[float32]",
             f"hydra.run.dir={tmp_path / 'run'}")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("kernelsynth: error:")]
    assert "ignore N" in line and "the same inputs" in line, line
    assert not (tmp_path / "run" / "observations").exists()


def test_reach_tells_shapes_apart_by_what_the_reference_gets():
    """verify.inputs.reach: tensors by shape and dtype (not values), other values by repr, nested lists
    item by item; jobs._check_reach raises only for two different shapes with equal reach."""
    import torch
    from kernelsynth.jobs import _check_reach
    from kernelsynth.verify.inputs import reach

    a, b = torch.zeros(3, 5), torch.ones(3, 5)
    assert reach([a, 2]) == reach([b, 2])
    assert reach([a, 2]) != reach([b, 3]) and reach([a]) != reach([a.double()]) and reach([a]) != reach([a.T])
    assert reach([[a, (1, 2)]]) != reach([[a, (1, 3)]])
    reached = {}
    _check_reach(reached, {"M": 3, "N": 5}, [], [a])
    _check_reach(reached, {"M": 3, "N": 5}, [], [b])  # the same shape again (another trial): fine
    _check_reach(reached, {"M": 3, "N": 6}, [6], [a])  # N reaches the Model's arguments: fine
    with pytest.raises(RuntimeError, match=r"on shape 3x5 and shape 3x7: .* ignore N,"):
        _check_reach(reached, {"M": 3, "N": 7}, [], [b])


def test_cli_resume_that_fails_before_any_work_keeps_run_json(tmp_path):
    """A resume into a finished run directory that stops on a user error before any work (here a spec path
    that does not exist) keeps that run's run.json: it was deleted first thing, so the finished run looked
    unfinished (a pre-existing defect, found in session 23)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text('{"task": "flip2d", "records": 4}')
    p = _cli("hw=cpu", f"task.spec={tmp_path / 'nowhere'}", f"hydra.run.dir={run}")
    assert p.returncode == 2, p.stderr[-2000:]
    assert (run / "run.json").read_text() == '{"task": "flip2d", "records": 4}'


def test_an_unknown_option_of_a_config_group_names_the_closest_and_the_valid_ones(tmp_path):
    """Session 30's new user: hw=h300 got Hydra's refusal with its config search path and a
    HYDRA_FULL_ERROR hint (exit 1); the CLI answers in one line per unknown option, exit 2, also for a
    sweep's items, and leaves sweep functions and added config folders to Hydra."""
    from kernelsynth.config import unknown_group_options
    from kernelsynth.paths import CONF_DIR

    p = _cli("hw=h300", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2 and "Traceback" not in p.stderr and "HYDRA_FULL_ERROR" not in p.stderr, p.stderr
    assert p.stderr.strip() == ("kernelsynth: error: hw=h300 is not an option of hw; did you mean hw=h200? "
                                "(valid: a100, auto, cpu, h100, h200)"), p.stderr
    assert unknown_group_options(["-m", "hw=cpu,H100", "publish=hubb", "task=flip2d", "hw=choice(cpu,h100)",
                                  "hydra/launcher=ray_cluster", "exploration=default", "hw.allow_mismatch=true"],
                                 CONF_DIR) == [
        "hw=H100 is not an option of hw; did you mean hw=h100? (valid: a100, auto, cpu, h100, h200)",
        "publish=hubb is not an option of publish; did you mean publish=hub? (valid: hub, none)"]
    assert unknown_group_options(["hw=mygpu", "--config-dir", "/tmp/x"], CONF_DIR) == []
