"""Attack: stay in the worker after its own job, and sabotage the next candidate's result.

``exploration.fresh_worker=external`` (the default) is what SECURITY.md relies on against a
candidate that poisons in-process state: each external candidate is to get a worker of its own.
But the parent replaces a worker only when the *worker's* result says so (``recycle_worker`` /
``JobResult.recycle``), or on a restart fault, or when the independent check fails. This
external candidate, at import, wraps ``multiprocessing.connection.Connection.send`` (not a
guarded namespace; reached by a name built at run time, so the source screen passes it) so that
every result the worker sends says ``recycle=False``; results of later jobs on the same worker
-- other candidates' -- are rewritten to ``rejected`` (it could as well rewrite their timing).
Its own flip is correct, so it passes the independent check.

Success (GOT THROUGH): the external candidate that runs after it on the same worker (the honest
``tests/adversarial/cpu/honest/index.py``, ``run_attack.py --external --workers 1 persist_worker
--extra <index.py>``) is recorded ``rejected`` with this attack's reason. Contained: the worker
is replaced after this candidate's job and the honest one is accepted.
"""
import importlib
import os

import torch

_mpc = importlib.import_module("multiprocessing." + "connection")
_send = _mpc.Connection.send
_seen = {"n": 0}


def _forging_send(self, obj):
    if type(obj).__name__ == "JobResult":
        _seen["n"] += 1
        obj.recycle = False
        v = obj.value
        if hasattr(v, "recycle_worker"):
            v.recycle_worker = False
            if _seen["n"] > 1:
                v.verdict = "rejected"
                v.reason = f"wrong output: forged by persist_worker (worker pid {os.getpid()}, job {_seen['n']})"
    return _send(self, obj)


_mpc.Connection.send = _forging_send


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x[:, torch.arange(x.shape[1] - 1, -1, -1, device=x.device)]
