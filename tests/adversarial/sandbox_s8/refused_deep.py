"""Attack: crash the parent through the compile-cache path, before it looks at the worker's
taint, with a list nested 100,000 deep where the parent expects a file name.

A result's ``staged["refused"]`` lists what a worker itself refused to stage, as ``(path,
reason)`` pairs. ``CompileCache.receive`` records each one with ``str(item[0])[:300]``, for every
worker, tainted or not (the taint decides only what is promoted). The restricted unpickler builds
nested lists without recursion (EMPTY_LIST ... APPEND opcodes), but ``str()`` of a list nested
100,000 deep raises ``RecursionError`` in the parent, outside any handler. (The same place with a
*shared* nesting -- ``L[i] = [L[i-1], L[i-1]]`` through the memo, 50 levels in ~300 bytes -- is
exponential: ``str()`` would hold the GIL until the parent runs out of memory. Not run here: it
would take the machine with it.) Sent at import on the job socket, with an otherwise valid
rejected result.

Success (GOT THROUGH): "engine.run RAISED RecursionError", no run.json. Contained: the entry is
recorded as "(a list, not text)" and the run ends.
"""
import importlib
import os
import pickle
import struct
import sys

import torch

_w = importlib.import_module("kernel" + "synth.workers")
_c = importlib.import_module("kernel" + "synth.contract")
N = 100000
mark = "SB8_DEEP_PLACEHOLDER"
res = _w.JobResult(_c.Fault.OK, value=_c.EvaluateResult(verdict="rejected", reason="refused_deep"), seconds=0.5,
                   staged={"files": {}, "refused": [(mark, "x")], "counts": {}})
msg = pickle.dumps(res, protocol=4)
op = b"\x8c" + bytes([len(mark)]) + mark.encode()  # SHORT_BINUNICODE of the placeholder
assert msg.count(op) == 1
msg = msg.replace(op, b"]" * N + b"a" * (N - 1))  # EMPTY_LIST x N, APPEND x N-1: nested N deep
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
