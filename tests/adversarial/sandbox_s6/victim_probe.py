"""Companion of ``hidden_leader.py`` (not an attack by itself): a correct flip that, at import,
looks for what an earlier job on the same worker left behind -- a heartbeat file in the worker's
/tmp that still advances, and /proc entries in state Z that still have running threads -- and
raises with what it found (its observation's reason is the evidence). Raises "nothing found"
when the worker is clean."""
import os
import time

import torch


def _live_zombies():
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            state = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                live = [t for t in os.listdir(f"/proc/{d}/task")
                        if open(f"/proc/{d}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
                if live:
                    out.append(f"pid {d} state Z with live threads {live}")
        except OSError:
            pass
    return out


def _heartbeat():
    try:
        a = open("/tmp/s6-heartbeat").read()
        time.sleep(1.0)
        b = open("/tmp/s6-heartbeat").read()
        return f"heartbeat {a!r} then {b!r} ({'ADVANCING' if a != b else 'stopped'})"
    except OSError as e:
        return f"no heartbeat ({e})"


def _debug():
    out = []
    for f in ("/tmp/s6-kill-debug", "/tmp/s6-lastcall"):
        try:
            out.append(f"{f}: {open(f).read()!r}")
        except OSError as e:
            out.append(f"{f}: {e.strerror}")
    for d in os.listdir("/proc"):
        if d.isdigit() and os.path.isdir(f"/proc/{d}/task"):
            for t in os.listdir(f"/proc/{d}/task"):
                try:
                    out.append(f"task {d}/{t}: " + open(f"/proc/{d}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0]
                               + " wchan " + open(f"/proc/{d}/task/{t}/wchan").read())
                except OSError as e:
                    out.append(f"task {d}/{t}: {e.strerror}")
    return f"now {time.time()!r}; " + "; ".join(out)


raise RuntimeError(f"victim_probe (pid {os.getpid()}): {_heartbeat()}; {_live_zombies() or 'no live zombie'}; {_debug()}")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x.flip(1)
