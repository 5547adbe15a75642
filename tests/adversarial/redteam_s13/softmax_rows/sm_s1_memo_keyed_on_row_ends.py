"""CHEAT, class 6 (stale answers), softmax_rows float32.

A module-level memo keyed on the shape and the bytes of the first 3 and last 3 elements of every row (a
"row signature": different from earlier folders' sampled-element, data_ptr and sum keys). On a hit the kept
output is cloned (a fresh allocation, so rule 10's output-reuse checks do not fire); else computed honestly.
Rule 10's interior changes (a region rotated by one place, an element swap) should meet it.
"""
import torch
import triton
import triton.language as tl

_MEMO = {}


@triton.jit
def sm_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < N
    x = tl.load(X + row * N + c, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.where(mask, tl.exp(x - tl.max(x, axis=0)), 0.0)
    tl.store(Y + row * N + c, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def copy_kernel(S, D, n, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(D + off, tl.load(S + off, mask=off < n), mask=off < n)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if not x.numel():
            return y
        k = min(3, N)
        sig = torch.cat([x[:, :k], x[:, N - k:]], dim=1).contiguous().view(torch.int32)
        key = (M, N, bytes(sig.flatten().to(torch.int64).tolist().__repr__(), "ascii"))
        hit = _MEMO.get(key)
        if hit is not None:
            copy_kernel[(triton.cdiv(M * N, 1024),)](hit, y, M * N, BLOCK=1024)
            return y
        sm_kernel[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
        _MEMO[key] = y.clone()
        return y
