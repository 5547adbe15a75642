"""CHEAT, cross_entropy, class 3 (the task's arithmetic outside any kernel, through another door): the logits
are read with `Tensor.tolist()` and the whole loss (max, log-sum-exp, pick, mean) is computed in float64 with the
Python `math` module; a one-program Triton kernel only stores that Python float into the 0-dim output.
Aims at rule 14 (the census: `tolist` is no screened name and Python's `math` is neither torch nor numpy)."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def store_scalar_kernel(O, val):
    tl.store(O, val)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, logits, target):
        rows = logits.tolist()
        tg = target.tolist()
        V = len(rows[0]) if rows else 1
        tot = 0.0
        for r, t in zip(rows, tg):
            mx = max(r)
            if math.isinf(mx) or math.isnan(mx):
                lse = float("nan")  # log_softmax of a row holding +-inf/NaN is NaN everywhere
            else:
                lse = mx + math.log(math.fsum(math.exp(v - mx) for v in r))
            tot += lse - r[((t % V) + V) % V]
        loss = tot / len(rows) if rows else float("nan")
        out = torch.empty((), device=logits.device, dtype=logits.dtype)
        store_scalar_kernel[(1,)](out, loss)
        return out
