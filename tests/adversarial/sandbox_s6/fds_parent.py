"""Attack: reach the parent through what the worker inherited or can name.

Probes, each reported in the reason: (1) every open descriptor (/proc/self/fd) and, for the
parent's stdout/stderr (fds 1 and 2, inherited), whether reopening them through /proc/self/fd
gives *read* access to the file behind them (the run's log, outside the sandbox); (2) the
processes visible (/proc) and whether the environment, memory or root of pid 1 (bwrap's init)
can be read or entered; (3) an abstract unix socket the parent listens on
(``run_attack.py --abstract``: ``@kernelsynth-s6``) and any abstract socket in /proc/net/unix;
(4) the resource limits in force while the candidate is imported (before or after the limits?).

Success (GOT THROUGH): the parent's log content, pid 1's environment or memory, or a connection
to the parent's abstract socket. Contained: each is refused (which errno says how).
"""
import os
import socket
import stat

import torch

report = []
for fd in sorted(os.listdir("/proc/self/fd"), key=int):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
        kind = stat.S_IFMT(os.fstat(int(fd)).st_mode)
        kind = {stat.S_IFREG: "file", stat.S_IFIFO: "pipe", stat.S_IFSOCK: "socket", stat.S_IFCHR: "chr"}.get(kind, kind)
    except OSError as e:
        target, kind = e.strerror, "?"
    line = f"fd {fd}: {target} ({kind})"
    if fd in ("1", "2") and kind == "file":
        try:
            with open(f"/proc/self/fd/{fd}", "rb") as f:
                line += f" REOPENED FOR READ: {f.read(200)!r}"
        except OSError as e:
            line += f" reopen for read: {e.strerror}"
    report.append(line)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
report.append(f"pids visible: {pids}")
for what in ("environ", "mem", "root/etc/hostname", "cwd"):
    try:
        p = f"/proc/1/{what}"
        data = os.listdir(p) if what == "cwd" else open(p, "rb").read(100)
        report.append(f"/proc/1/{what}: READ {data!r}")
    except OSError as e:
        report.append(f"/proc/1/{what}: {e.strerror}")
abstract = []
try:
    for line in open("/proc/net/unix").read().splitlines()[1:]:
        parts = line.split()
        if len(parts) > 7 and parts[7].startswith("@"):
            abstract.append(parts[7])
except OSError as e:
    abstract.append(e.strerror)
report.append(f"abstract sockets in /proc/net/unix: {abstract[:10]}")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0kernelsynth-s6")
    s.send(b"pwned from the sandbox")
    report.append("CONNECTED to @kernelsynth-s6")
except OSError as e:
    report.append(f"@kernelsynth-s6: {e.strerror}")
lim = {l.split("  ")[0]: " ".join(l.split()[-3:]) for l in open("/proc/self/limits").read().splitlines()[1:]
       if l.startswith(("Max processes", "Max open files", "Max file size", "Max cpu time"))}
report.append(f"limits at import: {lim}; uid {os.getuid()}")
report.append("status: " + "; ".join(l.strip() for l in open("/proc/self/status") if l.startswith(("CapEff", "CapInh", "CapBnd", "NoNewPrivs", "Seccomp:"))))
raise RuntimeError("fds_parent: " + " | ".join(report))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x.flip(1)
