"""Attack: make the run's record of its sandbox false -- run.json and the start-of-run line say
"a uid of its own per worker" while the candidates run as uid 0.

``engine.run`` builds one ``Sandbox`` for the hardware probe (readable: the reference's folder
only), logs *its* status and writes *it* to run.json (``sandbox.to_dict()``). Exploration builds
another (``Exploration.sandbox_for``: the candidates' folders readable too), whose ``drop_uid``
is False when a candidate or spec file is not readable by other users (mode 0600: umask 077,
common for users who care about secrets). Its status is never logged or recorded; for external
candidates the run refuses, but a spec ladder runs as uid 0 "without capabilities": it owns
root's files (sandbox_s6 ``uid0_fallback``) and ``RLIMIT_NPROC`` does not apply. This spec
candidate (run_attack.py ``--spec --private``: its file is 0600) reports its uid and what uid 0
gives it.

Success (GOT THROUGH): the candidate's reason says uid 0, while run_attack.py prints run.json's
``sandbox.status`` saying "a uid of its own per worker". Contained: run.json (and the log) say
uid 0 for the workers that ran the candidates, or the run refuses.
"""
import os
import resource

import torch

bits = [f"uid {os.getuid()} euid {os.geteuid()}",
        f"RLIMIT_NPROC {resource.getrlimit(resource.RLIMIT_NPROC)}"]
for p in ("/etc/shadow",):
    try:
        with open(p) as f:
            bits.append(f"{p}: READ {f.readline().strip()[:30]!r}")
    except OSError as e:
        bits.append(f"{p}: {type(e).__name__}")
RESULT = "; ".join(bits)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("uid_claim: " + RESULT)
