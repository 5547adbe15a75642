"""Task discovery: a task is a folder ``<root>/<task>/spec.yaml``; its name is the folder's.

Roots, in order: the built-in ``specs/`` (:data:`kernelsynth.paths.SPECS_DIR`), the folders in
``$KERNELSYNTH_SPECS`` (separated by ``:``), then ``task.search_path`` from the config. Folders
whose name starts with ``_`` hold files meant only for inclusion (``include:``) and are no task.
The same folder name in two roots is an error naming both spec files. Imported by the parent
and by the Hydra config source (hydra_plugins/kernelsynth_tasks), so it needs no torch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Sequence

from .errors import SpecError, UserError, closest
from .paths import SPECS_DIR

#: Extra spec roots, ``dir1:dir2`` (os.pathsep-separated).
ENV = "KERNELSYNTH_SPECS"


def spec_roots(search_path: Sequence[str] = ()) -> List[Path]:
    """Every root in lookup order, each once (by resolved path). Raises UserError naming the
    setting when an extra root is not a folder (a typo would otherwise hide its tasks)."""
    named = [(SPECS_DIR, "specs/")]
    named += [(Path(p), ENV) for p in os.environ.get(ENV, "").split(os.pathsep) if p.strip()]
    named += [(Path(p), "task.search_path") for p in search_path or ()]
    roots: List[Path] = []
    for path, source in named:
        path = path.expanduser().resolve()
        if not path.is_dir():
            if source == "specs/":
                continue  # an installation without built-in tasks
            raise UserError(f"{source}: {path} is not a folder of task folders (<task>/spec.yaml)")
        if path not in roots:
            roots.append(path)
    return roots


def discover(search_path: Sequence[str] = ()) -> Dict[str, Path]:
    """``{task name: spec.yaml path}`` of every task in every root, sorted by name.

    Raises SpecError naming both files when two roots hold a task folder of the same name.
    """
    found: Dict[str, Path] = {}
    for root in spec_roots(search_path):
        for spec in sorted(root.glob("*/spec.yaml")):
            name = spec.parent.name
            if name.startswith("_"):
                continue
            if name in found:
                raise SpecError(spec, "<folder name>", f"a task name used once across the spec roots "
                                f"(also {found[name]})", name)
            found[name] = spec
    return dict(sorted(found.items()))


def find_task(name: str, search_path: Sequence[str] = ()) -> Path:
    """The spec.yaml of task ``name``. Raises SpecError listing the known tasks and roots."""
    tasks = discover(search_path)
    if name not in tasks:
        roots = ", ".join(str(r) for r in spec_roots(search_path))
        close = closest(name, sorted(tasks), n=3)
        # the closest names last, where the eye lands (session 30's new user)
        hint = f" -- did you mean {' or '.join('task=' + c for c in close)}?" if close else ""
        raise SpecError(f"task={name}", "task.name", f"a task folder in one of the spec roots ({roots}; "
                        f"add roots with {ENV}=dir1:dir2 or task.search_path=[dir]); known tasks: {sorted(tasks)}",
                        name, hint=hint)
    return tasks[name]
