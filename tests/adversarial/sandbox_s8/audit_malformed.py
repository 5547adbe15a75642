"""Attack: crash the parent through its independent check, with an ``accepted`` result whose
audit digests are malformed.

For an accepted external candidate the parent recomputes nothing but compares the worker's
``EvaluateResult.audit`` (``{"<group>:<shape>:<trial>": digest}``) with the reference outputs it
computed itself (``kernelsynth.audit.audit_problem``, called from the pool's ``recycle``
callback). The digests are the worker's dicts and are read with ``d["shape"]``, ``d["dtype"]``,
``tensor_of(d)``: a digest ``{"type": "torch.Tensor"}`` and nothing else raises ``KeyError`` in
the parent, outside any handler. The keys are predictable (``kernelsynth.audit.expected_keys``:
``listed:<i>:<t>``, ``derived:<i>:0``, ``timing:0:<t>``), so this candidate sends every plausible
one, on the job socket at import.

Success (GOT THROUGH): "engine.run RAISED KeyError: 'shape'", no run.json. Contained: this
candidate is rejected by the independent check (the audit record does not check) and the run ends.
"""
import importlib
import os
import pickle
import struct
import sys

import torch

_w = importlib.import_module("kernel" + "synth.workers")
_c = importlib.import_module("kernel" + "synth.contract")
bad = {"type": "torch.Tensor"}
audit = {f"listed:{i}:{t}": bad for i in range(12) for t in range(6)}
audit |= {f"derived:{i}:0": bad for i in range(24)} | {f"timing:0:{t}": bad for t in range(6)}
v = _c.EvaluateResult(verdict="accepted", reason="", trials=1, audit=audit)
msg = pickle.dumps(_w.JobResult(_c.Fault.OK, value=v, seconds=0.5), protocol=4)
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
