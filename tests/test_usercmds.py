"""The user's own commands (issue 11): sweeps merged into one dataset, publishing, records that
claim only what was measured, the multi-turn column, interruptions, the console."""

import dataclasses
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, compose, listed_copy
from hub_server import TOKEN, HubServer

CHEAP = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "task.dtypes=[float32]"]


def _env(tmp_path, **extra):
    """No Hub token unless given; the Hub's and datasets' caches inside tmp_path; the checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT")}
    env |= {"HF_HOME": str(tmp_path / "hf_home"), "HF_DATASETS_CACHE": str(tmp_path / "hf_datasets"),
            "HF_HUB_DISABLE_XET": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])}
    return env | extra


def _ks(*args, env, cwd=ROOT, timeout=600, tools=False):
    mod = "kernelsynth.tools" if tools else "kernelsynth"
    return subprocess.run([sys.executable, "-m", mod, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def _comparable(rows):
    """Records without what differs between two runs of the same work: the date and the run's config."""
    for r in rows:
        r["provenance"].pop("date")
        r["provenance"].pop("config")
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture
def run(flip2d_cheap_run):
    """One cheap flip2d run on the interpreter (CHEAP: float32, one trial): tests/conftest.py's,
    shared with tests/test_tasks.py (the same config, built once)."""
    return flip2d_cheap_run


# ---------------------------------------------------------------------------------------- 2. merge
#: The second task of the sweeps: specs/gelu_tanh copied under this name with
#: ``shapes: {derived: false}`` (its listed interpreter shapes only). What the sweep tests check
#: (merge = one run over the union, two tasks in one merged dataset) does not depend on the task or
#: the shapes: an elementwise ladder is the cheapest second task (conv_relu_maxpool took ~120 s of
#: the fixture's 274 s on a 2-core CPU, session 17). flip2d is copied the same way (a folder named
#: flip2d, given by task.spec: the task is still flip2d): its derived shapes are half of each
#: version's interpreter time, in 4 job-equivalents here.
SECOND = "gelu_listed"



@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """Two sweeps of 2 tunable values each (flip2d over BLOCK_N, gelu_tanh -- as SECOND, found
    through task.search_path -- over BLOCK; both copies verified on their
    listed shapes only), merged into one dataset, and one run per task over both values.
    Tunables are pinned with plain task.tunables.X overrides. The flip2d sweep runs through
    hydra-submitit-launcher's local executor (``hydra/launcher=submitit_local``: each job a process
    of submitit's, as on Slurm), the gelu one through Hydra's basic launcher."""
    tmp = tmp_path_factory.mktemp("sweeps")
    env = _env(tmp)
    out = {"tmp": tmp, "procs": {}}
    listed_copy(ROOT / "specs" / "gelu_tanh", tmp / "specs" / SECOND)
    flip = listed_copy(ROOT / "specs" / "flip2d", tmp / "listed" / "flip2d")
    roots = [f"task.search_path=[{tmp / 'specs'}]"]
    # num_warps pinned: one config per job, so the single run's first two configs are the union
    for task, tunable, launcher, extra in (("flip2d", "BLOCK_N=128,256", ["hydra/launcher=submitit_local"],
                                            [f"task.spec={flip}"]),
                                           (SECOND, "BLOCK=1024,2048", [], roots)):
        p = _ks("-m", *launcher, *CHEAP, *extra, f"task={task}", f"task.tunables.{tunable}", "task.tunables.num_warps=4",
                f"hydra.sweep.dir={tmp / task}", f"cache_dir={tmp / 'cache'}", env=env)
        out["procs"][task] = p
        assert p.returncode == 0, p.stderr[-3000:]
        one = _ks(*CHEAP, *extra, f"task={task}", f"task.tunables.{tunable.replace('=', '=[')}]", "task.tunables.num_warps=4",
                  "exploration.interpreter_max_configs=2", f"hydra.run.dir={tmp / ('one-' + task)}",
                  f"cache_dir={tmp / 'cache'}", env=env)
        assert one.returncode == 0, one.stderr[-3000:]
    out["merge"] = _ks("merge", tmp / "flip2d", tmp / SECOND, "--out", tmp / "both", env=env, tools=True)
    return out


def test_a_sweep_ends_with_one_merged_dataset(sweeps):
    import datasets

    tmp = sweeps["tmp"]
    assert "merged 2 job(s)" in sweeps["procs"]["flip2d"].stdout
    ds = datasets.load_dataset(str(tmp / "flip2d" / "dataset"), "flip2d")
    assert list(ds) == ["cpu"] and ds["cpu"].num_rows == 1
    # the flip2d jobs ran in submitit's own processes (one folder, log and result per job)
    done = sorted((tmp / "flip2d" / ".submitit").glob("*/*_0_result.pkl"))
    assert len(done) == 2 and len({p.parent.name for p in done}) == 2
    assert "submitit_launcher.LocalLauncher" in (tmp / "flip2d" / "0" / ".hydra" / "hydra.yaml").read_text()


def test_the_slurm_launcher_config_is_the_plugins_with_one_gpu_per_job():
    """conf/hydra/launcher/slurm_submitit.yaml extends hydra-submitit-launcher's submitit_slurm
    (composed, not run: CI has no Slurm; the same plugin's local executor runs the sweep above)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from kernelsynth.config import register_configs
    from kernelsynth.paths import CONF_DIR

    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=["hydra/launcher=slurm_submitit",
                                                             "hydra.launcher.partition=gpu"], return_hydra_config=True)
    launcher = cfg.hydra.launcher
    assert launcher._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (launcher.gpus_per_node, launcher.tasks_per_node, launcher.timeout_min, launcher.partition) == (1, 1, 720, "gpu")


def test_merged_sweeps_equal_one_run_over_the_union(sweeps):
    import datasets
    import pyarrow.parquet as pq

    tmp = sweeps["tmp"]
    assert sweeps["merge"].returncode == 0, sweeps["merge"].stderr
    both = tmp / "both" / "dataset"
    for task in ("flip2d", SECOND):
        merged = _comparable(datasets.load_dataset(str(both), task, split="cpu").to_list())
        single = _comparable(datasets.load_dataset(str(tmp / f"one-{task}" / "dataset"), split="train").to_list())
        assert merged and merged == single
    ids = pq.read_table(tmp / "both" / "observations.parquet").column("key").to_pylist()
    assert len(ids) == len(set(ids))  # deduplicated by key
    singles = [k for task in ("flip2d", SECOND)
               for k in pq.read_table(tmp / f"one-{task}" / "observations.parquet").column("key").to_pylist()]
    assert sorted(ids) == sorted(singles)  # the same work: the union of the jobs is the single run
    card = (both / "README.md").read_text()
    for field in ("license: apache-2.0", "task_categories:", "size_categories:", "config_name: flip2d",
                  f"config_name: {SECOND}", "split: cpu"):
        assert field in card


def test_merge_names_failed_and_unfinished_jobs_and_exits_1(sweeps, tmp_path):
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(sweeps["tmp"] / "flip2d", sweep, ignore=shutil.ignore_patterns("dataset"))
    (sweep / "1" / "run.json").unlink()  # as if killed
    shutil.copytree(sweep / "0" / ".hydra", sweep / "2" / ".hydra")
    (sweep / "2" / "failed.json").write_text(json.dumps({"error": "spec.yaml: field 'x': expected y"}))
    p = _ks("merge", sweep, env=_env(tmp_path), tools=True)
    assert p.returncode == 1
    assert f"left out {sweep / '1'}: did not finish" in p.stdout
    assert f"left out {sweep / '2'}: failed: spec.yaml: field 'x'" in p.stdout
    assert (sweep / "dataset" / "README.md").is_file()


def test_a_tampered_observation_file_of_a_sweep_job_is_left_out_of_the_merge_and_named(sweeps, tmp_path):
    """A rejected observation of job 0 rewritten as accepted, keeping its old tag (what a candidate
    that reached the run directory would do): the merge reads jobs through the HMAC check
    (kernelsynth.store.verified_rows), so the file is not counted, is set aside, and is named."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    sweep = tmp_path / "sweep"
    shutil.copytree(sweeps["tmp"] / "flip2d", sweep, ignore=shutil.ignore_patterns("dataset"))
    keys = {j: {f.stem for f in (sweep / j / "observations").glob("*.parquet")} for j in ("0", "1")}
    own = sorted(keys["0"] - keys["1"])  # measured by job 0 only: no copy in job 1 stands in for it
    assert own, keys
    victim = sweep / "0" / "observations" / f"{own[0]}.parquet"
    table = pq.read_table(victim)
    forged = pa.Table.from_pylist([dict(r, verdict="accepted", fault="ok", reason="forged") for r in table.to_pylist()],
                                  schema=table.schema)  # same schema, same metadata: the old tag
    pq.write_table(forged, victim)
    before = _ks("merge", sweeps["tmp"] / "flip2d", "--out", tmp_path / "clean", env=_env(tmp_path), tools=True)
    assert before.returncode == 0, before.stderr
    p = _ks("merge", sweep, env=_env(tmp_path), tools=True)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"left out observation file {victim}: authentication tag does not match its content" in p.stdout
    merged = pq.read_table(sweep / "observations.parquet").column("key").to_pylist()
    clean = pq.read_table(tmp_path / "clean" / "observations.parquet").column("key").to_pylist()
    assert own[0] not in merged and sorted(merged + [own[0]]) == sorted(clean)  # only that one is missing
    assert not victim.exists() and len(list((sweep / "0" / "observations" / "untrusted").iterdir())) == 1
    events = json.loads((sweep / "run.json").read_text())["integrity_events"]
    assert [(e["job"], e["file"], e["at"]) for e in events] == [(str(sweep / "0"), str(victim), "merge")]


def test_two_merged_folders_of_the_same_name_load_their_own_records(sweeps, tmp_path):
    """The config is named after the task, so folder and config names are the same for two
    merges; the data's SHA-256 in the config keeps their datasets caches apart."""
    import datasets

    from kernelsynth.merge import merge

    merge([sweeps["tmp"] / "flip2d", sweeps["tmp"] / SECOND], tmp_path / "a")
    merge([sweeps["tmp"] / "flip2d"], tmp_path / "b")
    a = datasets.load_dataset(str(tmp_path / "a" / "dataset"), "flip2d", split="cpu")
    b = datasets.load_dataset(str(tmp_path / "b" / "dataset"), "flip2d", split="cpu")
    assert a["id"] == b["id"]  # same records, and
    c = datasets.load_dataset(str(tmp_path / "a" / "dataset"), SECOND, split="cpu")
    assert c[0]["task"] == SECOND
    with pytest.raises(ValueError):
        datasets.load_dataset(str(tmp_path / "b" / "dataset"), SECOND, split="cpu")


def test_merge_without_out_for_several_sweeps_is_one_line(sweeps, tmp_path):
    p = _ks("merge", sweeps["tmp"] / "flip2d", sweeps["tmp"] / SECOND, env=_env(tmp_path), tools=True)
    assert p.returncode == 2 and "--out DIR" in p.stderr and "Traceback" not in p.stderr


# -------------------------------------------------------------------------------------- 3. publish
def test_publish_without_a_token_stops_before_any_work(tmp_path):
    start = time.time()
    p = _ks(*CHEAP, "publish=hub", "publish.repo_id=org/name", f"hydra.run.dir={tmp_path / 'run'}", env=_env(tmp_path))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [
        "kernelsynth: error: publish: no Hugging Face token: set HF_TOKEN or run `hf auth login` "
        "(checked before any work, so nothing ran)"]
    assert not (tmp_path / "run" / "observations").exists() and time.time() - start < 60


@pytest.mark.parametrize("repo", ["justaname", "org/na me", "a/b/c"])
def test_publish_with_a_bad_repo_id_stops_before_any_work(tmp_path, repo):
    p = _ks(*CHEAP, "publish=hub", f"publish.repo_id={repo}", f"hydra.run.dir={tmp_path / 'run'}",
            env=_env(tmp_path, HF_TOKEN=TOKEN))
    assert p.returncode == 2 and "repo id" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "observations").exists()


def test_a_sweep_with_publish_pushes_its_merged_dataset_once(tmp_path):
    # flip2d on its listed shapes (conftest.listed_copy): what is pushed does not depend on the shapes
    flip = listed_copy(ROOT / "specs" / "flip2d", tmp_path / "listed" / "flip2d")
    with HubServer() as hub:
        env = _env(tmp_path, HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN)
        p = _ks("-m", *CHEAP, "task=flip2d", f"task.spec={flip}", "publish=hub", "publish.repo_id=org/sweep",
                f"hydra.sweep.dir={tmp_path / 'sweep'}", env=env)
        assert p.returncode == 0, p.stderr[-3000:]
        assert hub.state.commits == {"org/sweep": 1}
        assert sorted(hub.state.repos["org/sweep"]) == ["README.md", "data/flip2d/cpu-00000-of-00001.parquet"]
    assert json.loads((tmp_path / "sweep" / "0" / "run.json").read_text())["published"] is None  # the job did not push


def test_a_failed_push_keeps_the_run_and_its_retry_command_pushes_end_to_end(tmp_path):
    run_dir = tmp_path / "run"
    flip = listed_copy(ROOT / "specs" / "flip2d", tmp_path / "listed" / "flip2d")  # as above: the push is tested
    env = _env(tmp_path, HF_ENDPOINT="http://127.0.0.1:9", HF_TOKEN=TOKEN)  # nothing listens on port 9
    p = _ks(*CHEAP, f"task.spec={flip}", "publish=hub", "publish.repo_id=org/flips", f"hydra.run.dir={run_dir}",
            env=env)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    line = p.stderr.strip().splitlines()[-1]
    retry = f"kernelsynth-tools publish {run_dir} --repo-id org/flips"
    assert line.startswith("kernelsynth: error: publishing to org/flips failed (") and line.endswith(retry)
    assert "end-to-end wall time" in p.stdout  # the summary was printed
    assert json.loads((run_dir / "run.json").read_text())["publish_error"]
    with HubServer() as hub:  # the retry, end to end: pushed in one commit, then loaded from the "Hub"
        env = _env(tmp_path, HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN)
        again = _ks(*retry.split()[1:], env=env, tools=True)
        assert again.returncode == 0, again.stderr
        assert hub.state.commits == {"org/flips": 1}
        assert sorted(hub.state.repos["org/flips"]) == ["README.md", "data/train-00000-of-00001.parquet"]
        load = subprocess.run([sys.executable, "-c", "import datasets, json; ds = datasets.load_dataset("
                               "'org/flips', 'flip2d', split='train'); print(json.dumps(list(ds['id'])))"],
                              capture_output=True, text=True, env=env, timeout=300)
        assert load.returncode == 0, load.stderr[-3000:]
    import datasets

    assert json.loads(load.stdout) == list(datasets.load_dataset(str(run_dir / "dataset"), split="train")["id"])


# -------------------------------------------------------------------------------------- 5. records
TEXT_FIELDS = ("environment", "question", "trajectory_text", "answer", "why")


def _texts(rec):
    yield from ((f, rec[f]) for f in TEXT_FIELDS)
    yield from ((f"trajectory[{i}].rationale", v["rationale"]) for i, v in enumerate(rec["trajectory"]))
    yield from ((f"messages[{i}]", m["content"]) for i, m in enumerate(rec["messages"]) if m["role"] != "system")


def test_untimed_records_are_correctness_only_drafts_that_claim_nothing(run):
    from kernelsynth.records import DRAFT, EARLIER_MEASUREMENT

    rec = _records(run)[0]
    for name, text in _texts(rec):
        assert DRAFT in text, name
        assert not re.search(r"ceiling|speedup|\d+(\.\d+)?x\b|Expected:", text.replace(DRAFT, "")), (name, text)
        # red team s35 A: "On the H200, torch.compile's flip runs at about 101% of torch copy_" was in every draft
        assert not EARLIER_MEASUREMENT.search(text.replace(DRAFT, "")), (name, text)
        assert not any(c.notes and c.notes[:40] in text for c in run.spec.candidates), name  # notes stay in the spec
    assert next(c for c in run.spec.candidates if c.version == "v4").notes.startswith("On the H200")
    assert "chosen by ladder order" in rec["answer"] and rec["metrics"]["best_version"] == "v5"


def _records(run):
    import datasets

    return datasets.load_dataset(str(run.dataset_dir), split="train").to_list()


def _timed(run, times=(2.0, 1.0, 1.5, 1.3, 1.25, 1.2)):
    """The run's float32 trajectory with made-up timings on its observations (v0, v1, v2, v3, v4, v5)."""
    from omegaconf import OmegaConf

    from kernelsynth.records import build_record

    traj = next(t for t in run.trajectories if t["dtype"] == "float32")
    by_key = {o["key"]: dict(o) for o in run.observations}
    for key, ms in zip(traj["observation_keys"], times):
        by_key[key].update(median_ms=ms, p20_ms=ms, p80_ms=ms, achieved_gbps=100.0 / ms, pct_of_copy_ceiling=50 / ms,
                           n_regs=32, n_spills=0)
    cfg = OmegaConf.to_container(compose(CHEAP), resolve=True)
    return build_record(run.spec, run.hardware, traj, by_key, cfg, "sys"), by_key, traj


def test_spec_expectations_are_labelled_and_followed_by_the_measured_value(run):
    rec, _, _ = _timed(run)
    v1 = rec["trajectory"][1]["rationale"]
    assert "Spec author's expectation (not a measurement): about 2x v0. Measured: 1.0000 ms" in v1
    assert v1.endswith("2.00x v0.")
    assert "Expected:" not in rec["trajectory_text"]


def test_a_ladder_of_only_the_reference_is_rejected_and_the_run_exits_1(tmp_path):
    spec = tmp_path / "spec"
    (spec / "kernels").mkdir(parents=True)
    (spec / "kernels" / "eager.py").write_text(
        "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.flip(x, dims=[1])\n")
    (spec / "spec.yaml").write_text(
        f"name: onlyref\nreference: {ROOT / 'specs' / 'flip2d' / 'reference.py'}\ndims: [M, N]\n"
        "shapes: {verify: [[3, 5]]}\ndtypes: [float32]\nwork: {bytes: '2 * M * N * itemsize'}\nbaselines: []\n"
        "reference_ops: [flip]\ncandidates:\n  - {version: v0, name: eager, file: kernels/eager.py, technique: t,"
        " rationale: r, allow_reference_ops: true}\n")
    p = _ks(*CHEAP[:3], f"task.spec={spec}", f"hydra.run.dir={tmp_path / 'run'}", env=_env(tmp_path))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [
        f"kernelsynth: error: no records: 1 trajectory(ies) rejected; the reasons are in "
        f"{tmp_path / 'run' / 'trajectories.parquet'} (and printed above)"]
    assert "load_dataset" not in p.stdout and "other than the reference" in p.stdout


# ------------------------------------------------------------------------------- 6. agent messages
def _tiny_tokenizer():
    """A word-level tokenizer built here (no download) with a chat template that renders tool
    calls and tool turns, in the shape of the templates transformers ships."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<eos>": 1}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    template = (
        "{% if tools %}<tools>{{ tools | tojson }}</tools>\n{% endif %}"
        "{% for m in messages %}<|{{ m.role }}|>{% if m.content %}{{ m.content }}{% endif %}"
        "{% if m.tool_calls %}{% for c in m.tool_calls %}<call>{{ c.function.name }}"
        "{{ c.function.arguments | tojson }}</call>{% endfor %}{% endif %}<eos>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>", chat_template=template)


@pytest.mark.parametrize("timed", [False, True])
def test_both_chat_columns_are_in_the_form_trl_reads(run, timed):
    from trl.data_utils import apply_chat_template, is_conversational

    from kernelsynth.records import TOOL_NAME

    rec = _timed(run)[0] if timed else _records(run)[0]
    tok = _tiny_tokenizer()
    for column in ("messages", "agent_messages"):
        example = {"messages": rec[column], "tools": rec["tools"]}
        assert is_conversational(example)
        text = apply_chat_template(example, tok, tools=rec["tools"])["text"]
        assert text.count("<|assistant|>") == sum(m["role"] == "assistant" for m in rec[column])
    roles = [m["role"] for m in rec["agent_messages"]]
    assert roles == ["system", "user"] + ["assistant", "tool"] * 6 + ["assistant"]  # one call per version
    text = apply_chat_template({"messages": rec["agent_messages"]}, tok, tools=rec["tools"])["text"]
    assert text.count(f"<call>{TOOL_NAME}") == 6 and "<|tool|>" in text


def test_every_tool_turn_reports_its_observation(run):
    rec, by_key, traj = _timed(run)
    tools = [json.loads(m["content"]) for m in rec["agent_messages"] if m["role"] == "tool"]
    for got, key in zip(tools, traj["observation_keys"]):
        o = by_key[key]
        assert got["version"] == o["version"] and got["config"] == json.loads(o["config"])
        for k in ("median_ms", "p20_ms", "p80_ms", "achieved_gbps", "pct_of_copy_ceiling", "n_regs", "n_spills",
                  "trials", "max_rel_err"):
            assert got[k] == o[k], k
    calls = [m["tool_calls"][0]["function"]["arguments"] for m in rec["agent_messages"] if m["tool_calls"]]
    assert [c["code"] for c in calls] == [v["code"] for v in rec["trajectory"]]
    assert rec["agent_messages"][-1]["content"].startswith("v5 measured 1.2000 ms")


# --------------------------------------------------------------------------------- 7. interruptions
@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_mid_run_prints_one_line_with_the_resume_command(tmp_path, sig, code, word):
    run_dir = tmp_path / "run"
    args = CHEAP[:3] + ["task.dtypes=[float32,bfloat16]", f"hydra.run.dir={run_dir}"]
    proc = subprocess.Popen([sys.executable, "-m", "kernelsynth", *args], cwd=ROOT, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(list((run_dir / "observations").glob("*.parquet"))) < 1:
        time.sleep(0.2)
    os.killpg(proc.pid, sig)  # the whole group, as a terminal's Ctrl-C does
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code
    assert "Traceback" not in err + out and "BrokenPipeError" not in err + out
    resume = shlex.join(["python", "-m", "kernelsynth", *args[:-1]])  # the brackets quoted for the shell
    assert err.strip().splitlines()[-1] == (f"kernelsynth: {word}; finished observations are kept in {run_dir}. "
                                            f"Resume with: {resume} hydra.run.dir={run_dir}")


def test_workers_orphaned_by_a_killed_run_exit_quietly(tmp_path):
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "kernelsynth", *CHEAP[:3], "task.dtypes=[float32,bfloat16]",
                             f"hydra.run.dir={run_dir}"], cwd=ROOT, env=_env(tmp_path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(list((run_dir / "observations").glob("*.parquet"))) < 1:
        time.sleep(0.2)
    proc.kill()  # the parent only: its workers are orphaned mid-job
    err = proc.stderr.read()  # until every worker holding the pipe has exited
    assert "Traceback" not in err and "BrokenPipeError" not in err, err[-2000:]


# -------------------------------------------------------------------------------------- 8. console
def test_the_summary_fits_100_columns_and_drops_empty_columns(run):
    from rich.console import Console

    from kernelsynth.engine import summary_table

    for result in (run, dataclasses.replace(run, observations=_timed_observations(run))):
        console = Console(width=100, record=True, file=open(os.devnull, "w"))
        console.print(summary_table(result))
        text = console.export_text()
        assert max(len(line) for line in text.splitlines()) <= 100
    untimed = Console(width=100, record=True, file=open(os.devnull, "w"))
    untimed.print(summary_table(run))
    header = untimed.export_text()
    assert "best config" in header and "GB/s" not in header and "x eager" not in header


def _timed_observations(run):
    _, by_key, _ = _timed(run)
    return list(by_key.values())


def test_version_and_help(tmp_path):
    env = _env(tmp_path)
    for cmd in (["-m", "kernelsynth", "--version"], ["-c", "from kernelsynth.cli import main; main()", "--version"]):
        p = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
        assert p.returncode == 0 and p.stdout.strip() == "kernelsynth 0.1.0", p.stdout + p.stderr
    p = _ks("--help", env=env)
    assert p.stdout.startswith("kernelsynth: generate Hugging Face datasets of verified GPU-kernel optimization cases.")
    from kernelsynth.tasks import discover

    assert "task: " + ", ".join(sorted(discover())) in p.stdout  # every task found, sorted


def test_run_outputs_are_readable_by_the_group(run):
    """Every output, but the run's observation key: a secret of the parent (SECURITY.md), 0600."""
    from kernelsynth.store import KEY_FILE

    files = [p for p in run.run_dir.rglob("*") if p.is_file() and "cache" not in p.parts and p.name != KEY_FILE]
    assert len(files) > 5
    assert [p for p in files if p.stat().st_mode & 0o040 == 0] == []
    assert (run.run_dir / KEY_FILE).stat().st_mode & 0o777 == 0o600


def test_the_sweep_callback_names_a_merge_failure_once(tmp_path, capsys):
    """Found by a fresh-clone user: an empty sweep printed `kernelsynth: merge: merge: no finished job`."""
    from omegaconf import OmegaConf

    from kernelsynth.merge import MergeCallback

    (tmp_path / "0" / ".hydra").mkdir(parents=True)  # a job that never finished
    (tmp_path / "0" / ".hydra" / "config.yaml").write_text("task: {}\n")
    cfg = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    with pytest.raises(SystemExit) as e:
        MergeCallback().on_multirun_end(cfg)
    assert e.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("kernelsynth: merge: no finished job to merge") and "merge: merge:" not in err, err


def test_a_job_config_naming_a_foreign_target_is_refused_by_the_merge(sweeps, tmp_path):
    """tests/adversarial/sandbox_s7 merge_tamper: the merge instantiated the stages a job's
    .hydra/config.yaml names, so a job directory written by someone else could call any
    function (pathlib.Path.write_text wrote a file of its choosing). Only kernelsynth.* now."""
    import shutil

    from omegaconf import OmegaConf

    from kernelsynth.errors import UserError
    from kernelsynth.merge import merge

    sweep = tmp_path / "sweep"
    shutil.copytree(sweeps["tmp"] / "flip2d", sweep, ignore=shutil.ignore_patterns("dataset"))
    planted = tmp_path / "written-by-the-merge"
    cfg_path = sweep / "0" / ".hydra" / "config.yaml"
    cfg = OmegaConf.load(cfg_path)
    cfg.selection = {"_target_": "pathlib.Path.write_text",
                     "_args_": [{"_target_": "pathlib.Path", "_args_": [str(planted)]}, "x"]}
    OmegaConf.save(cfg, cfg_path)
    with pytest.raises(UserError, match=r"names stage target\(s\) outside kernelsynth \(pathlib.Path.write_text"):
        merge([sweep])
    assert not planted.exists()


def test_a_target_under_kernelsynth_that_resolves_elsewhere_is_foreign_to_the_merge():
    """tests/adversarial/sandbox_s8 merge_prefix: the fix above checked the ``kernelsynth.`` prefix,
    and Hydra resolves ``kernelsynth.merge.Path.write_text`` through merge.py's imports to
    pathlib's function (a real merge wrote the file). Only kernelsynth's own stages pass."""
    from omegaconf import OmegaConf

    from kernelsynth.config import SelectionConfig, SynthesisConfig
    from kernelsynth.merge import foreign_targets

    bad = OmegaConf.create({"_target_": "kernelsynth.merge.Path.write_text",
                            "_args_": [{"_target_": "kernelsynth.merge.Path", "_args_": ["/x"]}, "x"]})
    assert foreign_targets(bad) == ["kernelsynth.merge.Path.write_text", "kernelsynth.merge.Path"]
    assert foreign_targets({"_target_": "kernelsynth.store.atomic_write_bytes"}) == ["kernelsynth.store.atomic_write_bytes"]
    assert foreign_targets(OmegaConf.structured(SelectionConfig())) == []
    assert foreign_targets(OmegaConf.structured(SynthesisConfig())) == []
