"""``kernelsynth-tools``: commands around tasks and runs, one console script with argparse
subcommands (each is one ``cmd_<name>`` function and one ``add_parser`` call in :func:`main`).

    kernelsynth-tools tasks [--search-path DIR]...   every task found, with category, dtypes,
                                                     backends and ladder length
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional


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


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kernelsynth-tools",
                                     description="Commands around kernelsynth's tasks and runs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("tasks", help="list every task with its category, dtypes, backends and ladder length",
                       description="List every task found in specs/, $KERNELSYNTH_SPECS and --search-path.")
    p.add_argument("--search-path", action="append", default=[], metavar="DIR",
                   help="another folder of task folders (like task.search_path; repeatable)")
    p.set_defaults(func=cmd_tasks)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `kernelsynth-tools tasks | head`: the reader left, which is no error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
