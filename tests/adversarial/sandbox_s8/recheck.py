"""Check, from inside one job, that earlier fixes still hold (no new idea: a regression probe):
/run and /var/run hidden (sandbox_s7 unix_socket), a fresh session keyring (s6 keyring_read),
no credential variable in the environment, HOME/TMPDIR private, the run directory invisible,
the parent and the rest of the machine out of the PID namespace, no capabilities
(s6 setuid_nnp), /dev/shm bounded (s6 shm_fill), stdout not the run's log (s6 stdout_flood),
the shared cache read-only, and only the job socket and the output file as inherited
descriptors. Reports everything in the reason.

Success (a fix regressed): any "/run" entry, a key in the keyring, a credential name, a visible
pid other than 1 and 2, a CapEff other than 0, a writable cache. Contained: all empty or denied.
"""
import ctypes
import os

import torch


def probe():
    out = {"uid": os.getuid()}
    for d in ("/run", "/var/run", "/root", os.path.expanduser("~")):
        try:
            out[d] = sorted(os.listdir(d))[:8]
        except OSError as e:
            out[d] = e.strerror
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(4096)
    # keyctl(KEYCTL_READ=11, KEY_SPEC_SESSION_KEYRING=-3, buf, len): the key ids in the session keyring
    n = libc.syscall(250, 11, ctypes.c_long(-3), buf, 4096)
    out["session keyring bytes"] = n
    out["credential env"] = [k for k in os.environ if any(w in k for w in ("TOKEN", "KEY", "SECRET", "HF_", "AWS"))]
    out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    with open("/proc/self/status") as f:
        out["CapEff"] = next(line.split()[1] for line in f if line.startswith("CapEff"))
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass  # the listing's own descriptor
    out["fds"] = fds
    cache = os.environ.get("KERNELSYNTH_CACHE", "")
    try:
        open(os.path.join(cache, "cuda", "sb8-x"), "wb").close()
        out["cache"] = "WRITABLE"
    except OSError as e:
        out["cache"] = e.strerror
    st = os.statvfs("/dev/shm")
    out["/dev/shm MiB"] = st.f_blocks * st.f_frsize >> 20
    return out


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        raise RuntimeError(f"recheck: {probe()}")
