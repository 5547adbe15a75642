"""Every command the README and ``--help`` show is run here, on the CPU, as written, with the
changes listed in RULES (and only those) to keep it cheap and inside a temporary folder.

Commands are extracted, so commands added later are run too: the lines of ```bash blocks, and
indented lines (4 spaces) that start with one of PROGRAMS; ``a && b`` is two commands. Indented
Python snippets that start with ``import `` run after the commands (paths mapped the same way).
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from hub_server import TOKEN

PROGRAMS = ("python -m kernelsynth", "kernelsynth-tools ", "kernelsynth ", "pip ", "python -m pytest")

#: What is changed before running, and why; every rule is applied by :func:`prepare`.
RULES = {
    "pip install": "not run: .ci/run performs this install before the tests (it is how they got here)",
    "python -m pytest": "not run: this is the test run itself",
    "hw=<gpu>": "hw=h200/h100/a100/auto become hw=cpu: CI has no GPU (a GPU target there stops in one line)",
    "cheap": "exploration.trials=1, exploration.progress=false, task.dtypes=[float32] (unless the command sets "
             "dtypes) and cache_dir=<tmp> are appended",
    "dirs": "outputs/... and multirun/... paths (hydra.run.dir, hydra.sweep.dir, tool arguments) are moved under "
            "<tmp>; a kernelsynth run without hydra.run.dir/hydra.sweep.dir gets one under <tmp>",
    "hub": "HF_ENDPOINT points at tests/hub_server.py and HF_TOKEN is its token",
    "cluster": "not run: a hydra/launcher=slurm_submitit or ray_cluster sweep needs a Slurm or Ray cluster, which CI "
               "does not have; tests/test_usercmds.py runs a flip2d sweep through the same plugin's local executor "
               "(hydra/launcher=submitit_local) and composes slurm_submitit.yaml; Ray is not installed in CI (README)",
    "same": "a command that is the same as another one after these rules (only its run directory differs, or "
            "one of them names the default task of conf/config.yaml and the other leaves it implicit) runs once",
    "order": "python -m kernelsynth commands run first, in README order, then kernelsynth-tools commands, then "
             "Python snippets (a merge or publish needs the runs the README made before it); a test that reads a "
             "kernelsynth command's output may have run that command earlier in the session (they do not depend on "
             "each other; tests/conftest.py, readme_runs)",
}


#: The task a kernelsynth command runs when it names none (conf/config.yaml's defaults list).
DEFAULT_TASK = next(d["task"] for d in yaml.safe_load((ROOT / "conf" / "config.yaml").read_text())["defaults"]
                    if isinstance(d, dict) and "task" in d)


def readme_commands(text):
    """Commands of a Markdown text: ```bash block lines and indented lines starting with PROGRAMS."""
    cmds, in_bash = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            in_bash = line.strip() == "```bash"
            continue
        stripped = line.strip()
        if in_bash and stripped and not stripped.startswith("#"):
            cmds += [c.strip() for c in stripped.split("&&")]
        elif not in_bash and line.startswith("    ") and stripped.startswith(PROGRAMS):
            cmds.append(stripped)
    return list(dict.fromkeys(cmds))


def python_snippets(text):
    """Indented blocks (4 spaces) whose first line starts with ``import ``."""
    out, block = [], None
    for line in text.splitlines() + [""]:
        if line.startswith("    ") and (block is not None or line.strip().startswith("import ")):
            block = (block or []) + [line[4:]]
        elif block is not None:
            out.append("\n".join(block))
            block = None
    return out


def _help_text():
    p = subprocess.run([sys.executable, "-m", "kernelsynth", "--help"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _move(arg, tmp):
    return re.sub(r"(^|=)(outputs|multirun)/", lambda m: f"{m.group(1)}{tmp}/{m.group(2)}/", arg)


def prepare(cmd, tmp, i):
    """(argv, why-not-run): the command changed by RULES, or None and the rule that skips it."""
    if cmd.startswith("pip install"):
        return None, RULES["pip install"]
    if cmd.startswith("python -m pytest"):
        return None, RULES["python -m pytest"]
    if re.search(r"(^| )hydra/launcher=(slurm_submitit|ray_cluster)( |$)", cmd):
        return None, RULES["cluster"]
    argv = shlex.split(cmd)
    if argv[0] == "python":
        argv[0] = sys.executable
    if argv[0] in ("kernelsynth", "kernelsynth-tools"):
        argv = [sys.executable, "-m", "kernelsynth" if argv[0] == "kernelsynth" else "kernelsynth.tools"] + argv[1:]
    argv = [re.sub(r"^hw=(h200|h100|a100|auto)$", "hw=cpu", _move(a, tmp)) for a in argv]
    if argv[1:3] == ["-m", "kernelsynth"]:
        if not any(a.startswith("hw=") for a in argv):
            argv.append("hw=cpu")
        argv += ["exploration.trials=1", "exploration.progress=false", f"cache_dir={tmp}/cache"]
        if not any(a.startswith(("task.dtypes=", "+task.dtypes=")) for a in argv):
            argv.append("task.dtypes=[float32]")
        multirun = "-m" in argv[3:] or "--multirun" in argv[3:]
        key = "hydra.sweep.dir=" if multirun else "hydra.run.dir="
        if not any(a.startswith(key) for a in argv):
            argv.append(f"{key}{tmp}/cmd{i}")
    return argv, None


def readme_and_help_commands():
    """Every command of the README, then those --help shows that the README does not, in RULES' order."""
    readme = (ROOT / "README.md").read_text()
    cmds = readme_commands(readme) + [c for c in readme_commands(_help_text()) if c not in readme_commands(readme)]
    return sorted(cmds, key=lambda c: not c.startswith("python -m kernelsynth"))


class ReadmeRuns:
    """The README's and --help's commands changed by RULES, each run at most once in a session
    (tests/conftest.py's ``readme_runs``): tests/test_readme.py runs them all and asserts that each
    exits 0; other tests read what a command wrote (:meth:`out_dir`) instead of running the same
    work again (tests/conftest.py's ``flip2d_cheap_run`` and ``conv_interpreter_run``,
    tests/test_tunables.py's sweep). The environment is the user's shell: no TRITON_INTERPRET
    (hw=cpu sets it in the workers), HF_* pointing at tests/hub_server.py."""

    def __init__(self, tmp, hub):
        from kernelsynth.sandbox import Sandbox

        self.tmp, self.hub = tmp, hub
        self.cmds = readme_and_help_commands()
        box = Sandbox()  # external candidates need it; README: KERNELSYNTH_ALLOW_NO_SANDBOX=1 skips what does
        self.no_box = None if box.active or os.environ.get("KERNELSYNTH_ALLOW_NO_SANDBOX") != "1" else box.problem
        self.env = {**{k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}, "PYTHONPATH": str(ROOT),
                    "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp / "hf_home"),
                    "HF_DATASETS_CACHE": str(tmp / "hf_datasets"), "HF_HUB_DISABLE_XET": "1"}
        self.runs = {}  # a command's RULES["same"] key -> (argv, finished process)

    def run(self, cmd):
        """(argv, process, why-not-run) of ``cmd``: run now unless a command the same after RULES ran
        (its argv and process are returned), or (argv or None, None, the rule) when it is not run."""
        assert cmd in self.cmds, f"not a command of the README or --help: {cmd}"
        argv, why = prepare(cmd, self.tmp, self.cmds.index(cmd))
        if argv is None:
            return None, None, why
        if self.no_box and any(a.startswith("exploration.extra_candidates=") for a in argv):
            return argv, None, (f"external candidates need the sandbox, absent here ({self.no_box}); "
                                "KERNELSYNTH_ALLOW_NO_SANDBOX=1")
        same = tuple(sorted(a for a in argv if not a.startswith(("hydra.run.dir=", "hydra.sweep.dir="))
                            and a != f"task={DEFAULT_TASK}"))
        key = same if argv[2] == "kernelsynth" else (cmd,)
        if key not in self.runs:
            p = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=self.env, timeout=900)
            self.runs[key] = (argv, p)
        return (*self.runs[key], None)

    def out_dir(self, cmd):
        """The run or sweep directory ``cmd`` wrote (run first if it has not run); asserts it exited 0."""
        argv, p, why = self.run(cmd)
        assert p is not None, why
        assert p.returncode == 0, f"{cmd}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        return Path(next(a.split("=", 1)[1] for a in argv if a.startswith(("hydra.run.dir=", "hydra.sweep.dir="))))


def test_readme_and_help_commands_run_on_the_cpu(readme_runs):
    cmds = readme_runs.cmds
    assert any(c.startswith("python -m kernelsynth -m") for c in cmds) and any("publish" in c for c in cmds)
    ran, skipped = {}, []
    for cmd in cmds:
        argv, p, why = readme_runs.run(cmd)
        if p is None:
            skipped.append((cmd, why))
            continue
        assert p.returncode == 0, f"{cmd}\n(ran as {shlex.join(argv)})\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        if id(p) in ran:  # the same as another command after RULES: one run for both
            skipped.append((cmd, RULES["same"]))
        ran[id(p)] = cmd
    tmp_path = readme_runs.tmp
    for snippet in python_snippets((ROOT / "README.md").read_text()):
        code = re.sub(r"([\"'])(outputs|multirun)/", lambda m: f"{m.group(1)}{tmp_path}/{m.group(2)}/", snippet)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=readme_runs.env,
                           timeout=300)
        assert p.returncode == 0, f"{snippet}\n{p.stderr[-3000:]}"
    assert len(ran) >= 6 and all(why for _, why in skipped)
    assert sorted(readme_runs.hub.state.repos) == ["org/name"]  # the README's publish commands pushed there


def test_the_readme_fields_list_is_the_record_schema():
    """README's "Fields:" list names every column of kernelsynth.records.FEATURES, in order (session 8's
    fresh clone found precision_policy missing)."""
    from kernelsynth.records import FEATURES

    text = (ROOT / "README.md").read_text()
    listed = re.search(r"^Fields: `([^`]*)`", text, re.M).group(1)
    assert [f.strip().removesuffix("[]") for f in listed.split(",")] == list(FEATURES)


def test_cluster_sweeps_are_not_run_and_say_where_they_are_exercised():
    readme = (ROOT / "README.md").read_text()
    cluster = [c for c in readme_commands(readme) if "hydra/launcher=" in c]
    assert len(cluster) == 3 and all(prepare(c, "/T", 0) == (None, RULES["cluster"]) for c in cluster)


@pytest.mark.parametrize("cmd, expected", [
    ("python -m kernelsynth task=flip2d hw=h200", ["task=flip2d", "hw=cpu"]),
    ("kernelsynth-tools merge multirun/cpu", ["merge", "/T/multirun/cpu"]),
])
def test_prepare_changes_only_what_the_rules_say(cmd, expected):
    argv, _ = prepare(cmd, "/T", 0)
    assert argv[3:3 + len(expected)] == expected


def test_the_readme_task_listing_is_what_kernelsynth_tools_tasks_prints():
    """README's ``kernelsynth-tools tasks`` listing (its columns but the spec path) is the command's
    output for the built-in tasks (session 18: flip2d's ladder read 4, its spec has 5 versions)."""
    p = subprocess.run([sys.executable, "-m", "kernelsynth.tools", "tasks"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert p.returncode == 0, p.stderr
    printed = [line.split()[:-1] for line in p.stdout.splitlines()]
    text = (ROOT / "README.md").read_text()
    start = text.index("\n    task                category")
    block = text[start + 1:].split("\n\n", 1)[0].splitlines()
    listed = [line.split()[:-1] for line in block]
    assert printed[0] == listed[0] and len(printed) > 19
    assert listed == printed
