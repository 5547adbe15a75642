"""Attack: leave a live process behind that the leftover-process check does not count.

After each job the worker lists /proc and ignores entries in state ``Z`` (zombies). A process
whose main thread has ended with the raw ``exit`` system call (not ``exit_group``) while another
of its threads runs shows exactly that: its /proc entry says ``Z``, and /proc lists no thread ids.
At import this candidate forks a child that starts a thread (a heartbeat in the worker's private
/tmp, every 0.2 s) and ends its main thread that way. The flip itself is correct.

Success (GOT THROUGH): the candidate is accepted (no "left N process(es)" rejection), and the
next job on the same worker (``victim_probe.py``, ``exploration.fresh_worker=external``) finds the
heartbeat still advancing: a process of this candidate runs during another candidate's job.
Contained: the candidate is rejected with fault ``sandbox`` ("left 1 process(es) running").
"""
import ctypes
import os
import threading
import time

import torch


def _hidden():
    def beat():
        n = 0
        while True:
            n += 1
            with open("/tmp/s6-heartbeat", "w") as f:
                f.write(f"{os.getpid()} {n} {time.time()}")
            time.sleep(0.2)

    threading.Thread(target=beat, daemon=False).start()
    ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: this thread only; the heartbeat thread lives on


if os.fork() == 0:
    _hidden()
    os._exit(0)  # not reached
time.sleep(0.5)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]
