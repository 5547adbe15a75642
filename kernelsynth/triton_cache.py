"""Triton's cache manager in workers (``TRITON_CACHE_MANAGER=kernelsynth.triton_cache:StagedCacheManager``,
set by :meth:`kernelsynth.cache.CompileCache.worker_env`): lookups read the shared cache
(``$KERNELSYNTH_CACHE/triton``, read-only in the sandbox) first, then this worker's staging
folder; new compile outputs go to staging, from where the parent validates and promotes them
(kernelsynth/cache.py). Without staging (no sandbox) it writes the shared folder directly.

Triton's extension point: ``triton.runtime.cache.get_cache_manager`` instantiates the class named
by ``TRITON_CACHE_MANAGER`` (``knobs.cache.manager_class``) with the base32 of a compile's hash,
and calls ``get_group``/``put``/``put_group`` (compiles) and ``get_file``/``put`` (launcher
modules, autotuning results). Override and dump managers (``override=True``/``dump=True``)
are Triton's own behaviour, unchanged. Imported only in workers (it imports triton).
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Dict, Optional

from triton.runtime.cache import FileCacheManager

from .cache import COUNTS, roots


class StagedCacheManager(FileCacheManager):
    """See module docstring. ``self.cache_dir`` is where puts go (staging, else the shared folder);
    ``self.shared`` the shared folder of this key (None without a cache root)."""

    def __init__(self, key, override=False, dump=False):
        if override or dump:
            super().__init__(key, override=override, dump=dump)
            self.shared = None
            return
        shared, staging = roots("triton")
        if shared is None and staging is None:  # no kernelsynth cache configured: Triton's default
            super().__init__(key)
            self.shared = None
            return
        self.key = key
        self.shared = str(shared / key) if shared is not None else None
        self.cache_dir = str((staging if staging is not None else shared) / key)
        self.lock_path = os.path.join(self.cache_dir, "lock")

    def _folders(self):
        return [d for d in dict.fromkeys([self.shared, self.cache_dir]) if d]

    def _find(self, filename: str) -> Optional[str]:
        for d in self._folders():
            p = os.path.join(d, filename)
            if os.path.isfile(p) and os.access(p, os.R_OK):
                return p
        return None

    def _count(self, found: Optional[str]) -> None:
        if found is None:
            COUNTS["misses"] += 1
        elif self.shared and found.startswith(self.shared + "/"):
            COUNTS["shared_hits"] += 1
        else:
            COUNTS["staged_hits"] += 1

    def has_file(self, filename) -> bool:
        return self._find(filename) is not None

    def get_file(self, filename) -> Optional[str]:
        found = self._find(filename)
        self._count(found)
        return found

    def get_group(self, filename: str) -> Optional[Dict[str, str]]:
        """The group of ``filename`` from the first folder holding a complete one; its files are
        resolved by name in that folder (the paths written in it may be another folder's)."""
        for d in self._folders():
            path = os.path.join(d, f"__grp__{filename}")
            try:
                with open(path) as f:
                    children = json.load(f).get("child_paths")
            except (OSError, ValueError, AttributeError):
                continue
            if not isinstance(children, dict):
                continue
            result = {c: os.path.join(d, os.path.basename(str(p))) for c, p in children.items()}
            if all(os.path.isfile(p) and os.access(p, os.R_OK) for p in result.values()):
                self._count(path)
                return result
        self._count(None)
        return None

    def put(self, data, filename, binary=True) -> str:
        if not isinstance(data, bytes):
            data = str(data).encode()
        os.makedirs(self.cache_dir, exist_ok=True)
        path = os.path.join(self.cache_dir, filename)
        tmp = os.path.join(self.cache_dir, f".{filename}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # the data before the rename: a crash never leaves a short file there
        os.replace(tmp, path)  # atomic: a concurrent reader never sees half a file
        return path

    def put_group(self, filename: str, group: Dict[str, str]) -> str:
        """The group file, its children named where they will be once promoted (the shared folder;
        the parent rewrites them anyway): Triton's own FileCacheManager can read the shared cache."""
        final = self.shared or self.cache_dir
        children = {c: os.path.join(final, os.path.basename(str(p))) for c, p in group.items()}
        return self.put(json.dumps({"child_paths": children}), f"__grp__{filename}", binary=False)
