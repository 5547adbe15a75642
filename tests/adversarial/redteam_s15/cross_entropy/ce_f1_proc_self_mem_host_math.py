"""CHEAT, class 3 (library/host fallback through a door not yet tried), cross_entropy float32.

Idea: the whole loss is computed on the host in Python double precision (math.exp, math.fsum,
math.log), reading the logits and targets and writing the 0-dim result through the process's own
memory file /proc/self/mem at `Tensor.data_ptr()` -- no torch operator touches the data (so the dispatch
census records only `empty`), none of the watched host doors is called (`numpy`, `__array__`,
`__dlpack__`, `tolist`, storage methods, `frombuffer`, `as_tensor`/`tensor` from buffers: the bytes are
turned into numbers by the stdlib `array` module and go back as bytes), no numpy, one scalar read at
most. A Triton kernel is launched on a scratch buffer so the call is not "(no kernel of its own)".
"""
import array
import math

import torch
import triton
import triton.language as tl


@triton.jit
def ce_f1_touch(S):
    tl.store(S, 0.0)


def _read(t, nbytes):
    with open("/proc/self/mem", "rb", buffering=0) as f:
        f.seek(t.data_ptr())
        return f.read(nbytes)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, logits, target):
        M, V = logits.shape
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        scratch = torch.empty((1,), dtype=torch.float32, device=logits.device)
        ce_f1_touch[(1,)](scratch)
        x = array.array("f", _read(logits, M * V * 4))
        t = array.array("q", _read(target, M * 8))
        total = []
        for i in range(M):
            row = x[i * V:(i + 1) * V]
            mx = max(row)
            if mx == math.inf or mx != mx:
                bad = mx != mx or any(v != v for v in row) or row[t[i] % V] == math.inf
                total.append(float("nan") if bad else math.inf)
                continue
            if any(v != v for v in row):
                total.append(float("nan"))
                continue
            lse = mx + math.log(math.fsum(math.exp(v - mx) for v in row))
            total.append(lse - row[t[i] % V])
        loss = math.fsum(total) / M if all(l == l for l in total) else float("nan")
        with open("/proc/self/mem", "r+b", buffering=0) as f:
            f.seek(out.data_ptr())
            f.write(array.array("f", [loss]).tobytes())
        return out
