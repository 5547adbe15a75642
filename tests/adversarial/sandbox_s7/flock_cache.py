"""Attack: stall other runs' parents by holding a lock on a file of the shared compile cache.

The shared cache is bound read-only into every worker, but ``flock`` needs only an open file
descriptor, and a read-only one will do. ``kernelsynth.hardware.load_or_measure_ceilings`` (the
parent of every GPU run, before any job) takes ``flock(<cache_dir>/ceilings.lock, LOCK_EX)``
and waits for it without a timeout; the file is created by ``open(path, "w")``, so under umask
022 it is world-readable. This external candidate opens it read-only at import, takes
``LOCK_EX`` and keeps it while its job runs (here 15 s; a real one holds it up to
``exploration.timeout_s``, and a corpus of such candidates holds it for the whole screening
run). Any other run on this cache (a sweep's next job, a colleague's run, CI) blocks at start
in the meantime; ``flock`` on any other world-readable file another program locks (a lock in a
repository, /etc, a shared dataset folder) works the same.

Success (GOT THROUGH): run_attack.py ``--lock`` reports that its own ``flock(LOCK_EX|LOCK_NB)`` on
``ceilings.lock`` -- what another run's parent takes -- was refused for ~15 s, and the candidate's
reason says it held the lock. Contained: the candidate's ``flock`` fails (fault ``sandbox``) or
the lock file is not visible.
"""
import fcntl
import os
import time

import torch

path = os.path.join(os.environ.get("KERNELSYNTH_CACHE", "/nonexistent"), "ceilings.lock")
try:
    f = open(path, "rb")  # read-only: the cache is bound read-only
    fcntl.flock(f, fcntl.LOCK_EX)
    t = time.monotonic()
    time.sleep(15)
    RESULT = f"held LOCK_EX on {path} (opened read-only, uid {os.getuid()}) for {time.monotonic() - t:.1f} s"
except OSError as e:
    RESULT = f"{path}: {type(e).__name__} {e}"


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("flock_cache: " + RESULT)
