"""Import a task's reference and kernel files by path (inside a worker process)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def import_file(path: str | Path) -> ModuleType:
    """Import a Python file as a module named after its path's hash (cached per process).

    Raises ImportError (with the file named) if the file is missing or raises while importing.
    """
    path = Path(path).resolve()
    name = "ks_" + path.stem + "_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
