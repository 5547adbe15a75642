"""Attack: abort the parent's run with a result whose text field holds a lone surrogate.

A Python str may hold a lone surrogate (``"\\ud800"``); pickle carries it (UTF-8 with
``surrogatepass``), and ``schema_mismatches`` sees a ``str`` where the schema has a string. UTF-8
cannot encode it, so pyarrow raises ``UnicodeEncodeError`` when the parent writes the row
(``store.append``), outside any handler. An honest candidate can produce one too: an exception
text with a file name decoded by ``os.fsdecode`` from non-UTF-8 bytes (``\\udcff``), so the fix
must keep the text, not call it tampering. Sent at import on the job socket, verdict
``rejected``.

Success (GOT THROUGH): "engine.run RAISED UnicodeEncodeError", no run.json. Contained: the
observation is written with the character escaped (``\\ud800`` as six characters) and the run ends.
"""
import importlib
import os
import pickle
import struct
import sys

import torch

_w = importlib.import_module("kernel" + "synth.workers")
_c = importlib.import_module("kernel" + "synth.contract")
v = _c.EvaluateResult(verdict="rejected", reason="surrogate_text: \ud800 in the reason")
msg = pickle.dumps(_w.JobResult(_c.Fault.OK, value=v, seconds=0.5), protocol=4)
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
