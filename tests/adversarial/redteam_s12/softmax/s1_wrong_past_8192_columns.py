"""CHEAT, softmax_rows, class 5 (wrong only at some large ragged dim).

Rows longer than 8192 columns are normalised over their first 8192 columns only (the tail gets
exp(x - max)/sum of the head). Aims at rule on shape coverage (large, ragged N)."""
import torch
import triton
import triton.language as tl


@triton.jit
def sm_kernel(X, Y, N, CAP, B: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, B)
    v = tl.load(X + row * N + c, mask=c < N, other=-float("inf")).to(tl.float32)
    h = tl.where(c < CAP, v, -float("inf"))
    mx = tl.max(h, axis=0)
    s = tl.sum(tl.exp(h - mx), axis=0)
    tl.store(Y + row * N + c, (tl.exp(v - mx) / s).to(Y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        N = x.shape[-1]
        y = torch.empty_like(x)
        if y.numel() == 0:
            return y
        sm_kernel[(x.numel() // N,)](x, y, N, 8192, B=triton.next_power_of_2(N))
        return y
