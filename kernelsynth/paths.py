"""Where kernelsynth's own files are: the Hydra config (``conf/``), the built-in tasks
(``specs/``) and the cache.

In a source checkout, ``conf/`` and ``specs/`` sit at the repository root, beside the package.
A built wheel (``pip install .``) ships them inside the package as ``kernelsynth/conf`` and
``kernelsynth/specs`` (pyproject.toml maps the root folders there), so the lookup is: the
folder inside the package when it exists, else the one beside it. Imported by the parent
process, so it needs no torch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name


#: Hydra's primary config folder (config.yaml and the groups hw/, exploration/, ...).
CONF_DIR = _data_dir("conf")
#: The built-in task folders (one ``<task>/spec.yaml`` each); other roots: kernelsynth.tasks.
SPECS_DIR = _data_dir("specs")


def cache_dir(configured: Optional[str] = None) -> Path:
    """The cache folder (measured ceilings, compiled CUDA kernels, torch extensions): the
    ``cache_dir`` config value when set, else ``$KERNELSYNTH_CACHE``, else ``~/.cache/kernelsynth``.
    The one place this is decided; the parent passes the result to its workers."""
    return Path(configured or os.environ.get("KERNELSYNTH_CACHE") or "~/.cache/kernelsynth").expanduser()
