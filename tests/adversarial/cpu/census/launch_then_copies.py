"""Cheat (the task's work done by layout operators, flip2d): one tiny Triton kernel of its own is
launched (it zeroes a scratch element), so the call is not kernel-free, and the flip itself is
N column copies out.narrow(1, j, 1).copy_(x.narrow(1, N-1-j, 1)): narrow and copy_ only. On a
data-movement task a copy of an input is counted as a library call."""
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(P):
    tl.store(P, 0.0)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        scratch = torch.empty(1, device=x.device, dtype=torch.float32)
        _touch[(1,)](scratch)
        M, N = x.shape
        out = torch.empty_like(x)
        for j in range(N):
            out.narrow(1, j, 1).copy_(x.narrow(1, N - 1 - j, 1))
        return out
