"""Attack: fill memory through /dev/shm, which the scratch limit does not cover.

The sandbox gives each worker a private /tmp of ``tmp_mb`` and a private /dev/shm -- a second
tmpfs, mounted without ``--size``, so the kernel's default applies (half of RAM). Files in a
tmpfs are memory that belongs to no process: the OOM killer cannot free it by killing the worker,
and picks the largest process instead (the run). This candidate writes files of
``RLIMIT_FSIZE`` (``fsize_mb``) each into /dev/shm until it has written 2.5 x ``tmp_mb``
(a modest 240 MiB with the test settings), and compares with the same into /tmp.

Success (GOT THROUGH): more than ``tmp_mb`` lands in /dev/shm (the reason says how much, and the
size of the mount). Contained: ENOSPC at or below ``tmp_mb``.
"""
import os

import torch

CHUNK = 1 << 20


def _fill(folder, total_mb, per_file_mb):
    wrote, err = 0, None
    block = b"\xa5" * CHUNK
    i = 0
    while wrote < total_mb and err is None:
        try:
            with open(os.path.join(folder, f"s6-fill-{i}"), "wb") as f:
                for _ in range(per_file_mb):
                    f.write(block)
                    f.flush()
                    wrote += 1
                    if wrote >= total_mb:
                        break
        except OSError as e:
            err = f"{type(e).__name__} errno {e.errno}"
        i += 1
    return wrote, err


def _fsize_mb():
    import resource
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return max(1, (soft >> 20) - 1) if soft != resource.RLIM_INFINITY else 64


st = os.statvfs("/dev/shm")
shm_size_mb = st.f_blocks * st.f_frsize >> 20
tmp = os.statvfs("/tmp")
tmp_mb = tmp.f_blocks * tmp.f_frsize >> 20
shm = _fill("/dev/shm", int(2.5 * tmp_mb), _fsize_mb())
for f in os.listdir("/dev/shm"):
    os.unlink(os.path.join("/dev/shm", f))
raise RuntimeError(f"shm_fill: /dev/shm is {shm_size_mb} MiB, /tmp is {tmp_mb} MiB; wrote {shm[0]} MiB into "
                   f"/dev/shm (stopped by {shm[1]}) -> {'GOT THROUGH' if shm[0] > tmp_mb else 'contained'}")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x.flip(1)
