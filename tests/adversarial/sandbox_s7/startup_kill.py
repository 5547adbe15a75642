"""Attack (the worker's life cycle, not a candidate): leave processes alive after their worker
and after the run, by making the parent kill a worker while bubblewrap is still starting it.

``_Worker.kill`` sends SIGKILL to the Popen process only: the outer ``bwrap``. bwrap forks an
inner ``bwrap`` that becomes pid 1 of the new PID namespace and waits (eventfd) for the outer one
to finish setting it up; ``--die-with-parent`` is armed only later. Killed in that window (the
first ~20 ms), the outer one dies and the inner one stays forever: ppid 1, root, blocked in
``do_wait``, holding the parent's (deleted) worker-output file and a socket. The parent kills
freshly started workers whenever it ends right after starting one: ``WorkerPool.__exit__`` after
an exception (a candidate that crashes the parent -- ``field_types``, ``screen_crash`` -- does so
just after ``_replace`` started the next worker), ``close()`` with a spare started ahead, Ctrl-C.

This script starts 18 sandboxed workers (``kernelsynth.workers._Worker``, ``tmp_mb=77`` to tell
them apart) and kills each after 0-50 ms, then lists the bwrap processes left. It kills what it
finds afterwards (by pid).

Success (GOT THROUGH): bwrap processes of these workers are alive with ppid 1 after every worker
was killed. Contained: none is left.

    PYTHONPATH=$PWD python3 tests/adversarial/sandbox_s7/startup_kill.py
"""
import os
import signal
import time

from kernelsynth.sandbox import Sandbox
from kernelsynth.workers import _Worker

MARK = f"--size {77 << 20} "  # this script's workers only


def left():
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode()
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
            if cmd.startswith("/usr/bin/bwrap") or cmd.split(" ")[0].endswith("bwrap"):
                if MARK in cmd:
                    out.append((int(p), ppid))
    return out


def main():
    sb = Sandbox({"mode": "on", "tmp_mb": 77})
    n = 0
    for delay in (0.0, 0.001, 0.003, 0.01, 0.02, 0.05):
        for _ in range(3):
            w = _Worker(sb, {})
            time.sleep(delay)
            w.kill()
            n += 1
    time.sleep(2)
    found = left()
    print(f"{n} workers killed; bwrap processes left 2 s later (pid, ppid): {found}")
    print(f"orphaned (ppid 1): {sum(pp == 1 for _, pp in found)}")
    for pid, _ in found:
        os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    main()
