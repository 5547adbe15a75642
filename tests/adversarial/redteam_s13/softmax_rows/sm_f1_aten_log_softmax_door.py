"""CHEAT, class 3 (library fallback through an unusual door), softmax_rows float32.

The row normalisation comes from ``torch.ops.aten._log_softmax.default`` (a private aten overload, not the
task's ``softmax``); a Triton kernel only exponentiates the log-probabilities. Must be LABELLED
(library_calls names _log_softmax) or rejected.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def exp_kernel(L, Y, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mk = off < n
    tl.store(Y + off, tl.exp(tl.load(L + off, mask=mk, other=0.0)), mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        lsm = torch.ops.aten._log_softmax.default(x.contiguous(), 1, False)
        y = torch.empty_like(lsm)
        n = y.numel()
        if n:
            exp_kernel[(triton.cdiv(n, 1024),)](lsm, y, n, BLOCK=1024)
        return y
