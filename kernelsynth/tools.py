"""``kernelsynth-tools``: commands around tasks and runs, one console script with argparse
subcommands (each is one ``cmd_<name>`` function and one ``add_parser`` call in :func:`build_parser`).

    kernelsynth-tools tasks [--search-path DIR]...     every task found, with category, dtypes,
                                                       backends and ladder length
    kernelsynth-tools merge SWEEP_OR_RUN_DIR... [--out DIR]
    kernelsynth-tools publish RUN_OR_SWEEP_DIR --repo-id org/name [--public]
    kernelsynth-tools import-kernelbench FILE_OR_FOLDER... --out SPECS_DIR [--timeout-s S] [--sandbox auto|on|off]
                                       [--timing-budget-gib GIB] [--keep-failing-reference]

User errors print one line (``kernelsynth-tools: error: ...``) and exit with status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional

from .errors import UserError


def cmd_tasks(args: argparse.Namespace) -> int:
    """Print one line per task found in the spec roots (kernelsynth/tasks.py): name, category,
    dtypes, backends, ladder length (candidates) and the spec file. A spec that does not load
    is listed with its error, and the exit status is then 1."""
    from .errors import UserError
    from .spec import load_spec
    from .tasks import discover

    try:
        tasks = discover(args.search_path)
    except UserError as e:
        print(f"kernelsynth-tools: error: {e}", file=sys.stderr)
        return 2
    rows, broken = [("task", "category", "dtypes", "backends", "ladder", "spec")], 0
    for name, path in tasks.items():
        try:
            spec = load_spec(path, task_folder=True)
        except UserError as e:
            rows.append((name, "-", "-", "-", "-", f"error: {e}"))
            broken += 1
            continue
        backends = sorted({c.backend for c in spec.candidates})
        rows.append((name, spec.category, ",".join(spec.dtypes), ",".join(backends), str(len(spec.candidates)),
                     str(path)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 1 if broken else 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Merge sweep jobs (or run directories) into one dataset (kernelsynth/merge.py)."""
    from .merge import merge as do_merge, report

    result = do_merge(args.dirs, args.out)
    for line in report(result):
        print(line)
    return 1 if result.failed or result.integrity_events else 0


def cmd_publish(args: argparse.Namespace) -> int:
    """Push the dataset of a run or a merged sweep to the Hub (kernelsynth/publish.py)."""
    from .publish import PublishError, check_hub, push

    dataset = Path(args.dir) / "dataset"
    if not (dataset / "README.md").is_file():
        raise UserError(f"{args.dir}: no dataset/README.md (a run or merged sweep directory holds one; "
                        "merge a sweep first with `kernelsynth-tools merge DIR`)")
    check_hub(args.repo_id)
    try:
        url = push(dataset, args.repo_id, private=not args.public)
    except PublishError as e:
        print(f"kernelsynth-tools: error: publishing {dataset} to {args.repo_id} failed ({e}); "
              "the local dataset is unchanged", file=sys.stderr)
        return 1
    print(f"published {dataset} -> {url}  (datasets.load_dataset('{args.repo_id}', '<task>'))")
    return 0


def cmd_import_kernelbench(args: argparse.Namespace) -> int:
    """Import KernelBench-format problem files as task folders (kernelsynth/importers/kernelbench.py);
    exit status 1 when any problem could not be imported or was left out (each has its one-line reason)."""
    from .importers.kernelbench import import_all, print_table

    if args.timeout_s <= 0:
        raise UserError(f"--timeout-s must be positive, got {args.timeout_s}")
    if args.timing_budget_gib <= 0:
        raise UserError(f"--timing-budget-gib must be positive, got {args.timing_budget_gib}")
    reports = import_all(args.paths, args.out, timeout_s=args.timeout_s, sandbox=args.sandbox,
                         timing_budget_bytes=int(args.timing_budget_gib * (1 << 30)),
                         keep_failing_reference=args.keep_failing_reference)
    print_table(reports, args.out)
    return 0 if all(r.status == "imported" for r in reports) else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kernelsynth-tools", description="Commands around kernelsynth's tasks and runs.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    t = sub.add_parser("tasks", help="list every task with its category, dtypes, backends and ladder length",
                       description="List every task found in specs/, $KERNELSYNTH_SPECS and --search-path.")
    t.add_argument("--search-path", action="append", default=[], metavar="DIR",
                   help="another folder of task folders (like task.search_path; repeatable)")
    t.set_defaults(func=cmd_tasks)
    m = sub.add_parser("merge", help="merge a sweep's jobs (or run directories) into one dataset")
    m.add_argument("dirs", nargs="+", type=Path, help="sweep directories (multirun/...) or run directories")
    m.add_argument("--out", type=Path, default=None, help="where the merge goes (default: the sweep directory)")
    m.set_defaults(func=cmd_merge)
    pub = sub.add_parser("publish", help="push the dataset of a run or merged sweep to the Hugging Face Hub")
    pub.add_argument("dir", type=Path, help="a run directory or a merged sweep directory (holds dataset/)")
    pub.add_argument("--repo-id", required=True, help="org/name of the Hub dataset repo")
    pub.add_argument("--public", action="store_true", help="create the repo public (default: private)")
    pub.set_defaults(func=cmd_publish)
    kb = sub.add_parser("import-kernelbench", help="turn KernelBench-format problem files into task folders",
                        description="Turn KernelBench-format problems (class Model, size constants, get_inputs(), "
                                    "get_init_inputs()) into task folders kb_l<level>_<number>_<slug>, with an import "
                                    "report (import_report.json) of every decision and what needs a person.")
    kb.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_FOLDER",
                    help="problem .py files, or folders searched for them (level<N> folders give the level)")
    kb.add_argument("--out", type=Path, required=True, help="the specs folder the task folders go into")
    kb.add_argument("--timeout-s", type=float, default=120.0, metavar="S",
                    help="seconds one problem's analysis may take before it is stopped (default 120)")
    kb.add_argument("--sandbox", choices=("auto", "on", "off"), default="auto",
                    help="run each problem's code in the bubblewrap sandbox of SECURITY.md: auto (when it works "
                         "here, else unsandboxed and said so), on (refuse without it), off (default auto)")
    kb.add_argument("--timing-budget-gib", type=float, default=16.0, metavar="GIB",
                    help="the most GiB the timing shape's inputs, outputs and parameters may take; larger original "
                         "sizes are scaled down and flagged (default 16)")
    kb.add_argument("--keep-failing-reference", action="store_true",
                    help="write the spec of a problem whose eager float32 reference fails its own float32 tolerance "
                         "(flag reference-fails-tolerance); by default it is left out, with its reason in the report")
    kb.set_defaults(func=cmd_import_kernelbench)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    """Run one subcommand; returns its exit status (the console script exits with it)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except UserError as e:
        print(f"kernelsynth-tools: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `kernelsynth-tools tasks | head`: the reader left, which is no error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def console() -> None:
    """The ``kernelsynth-tools`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    console()
