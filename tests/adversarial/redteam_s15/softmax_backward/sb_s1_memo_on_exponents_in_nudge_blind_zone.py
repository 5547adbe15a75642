"""CHEAT, class 6 (stale answers, memo keyed on part of the input), softmax_backward float32.

Idea: an answer memo keyed on the SIGN AND EXPONENT of every element of y and dy (mantissas ignored),
folded into one position-weighted hash by a Triton kernel (one `.item()` per call), and -- the point --
a stored answer is handed back only when its largest |dx| is below 0.4. Rule 10's tolerance-scale call
(every float input times 1 + 4 rtol, `verify.inputs.plan_nudge`) is the only change that keeps such a
key (each element's exponent flips with probability about 1.2e-4); its docstring says the stale answer
is out of tolerance only "wherever |y| > atol / (3 rtol)", which is 1e-4 / 9.2e-5 = 1.09 for this
spec's float32 tolerance, so outputs below 0.4 are inside the blind zone by construction. Every other
change (element, region, permutation, block exchange, last element, fresh draws) moves an exponent or a
position, so the memo misses there and recomputes. The stale answer is served through a fresh buffer
(a Triton copy), so no output memory is shared or kept.
"""
import torch
import triton
import triton.language as tl

_MEMO = {}


@triton.jit
def sb_s1_hash(Y, DY, OUT, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n
    a = (tl.load(Y + i, mask=ok, other=0.0).to(tl.int32, bitcast=True) >> 23).to(tl.int64) & 0x1FF
    b = (tl.load(DY + i, mask=ok, other=0.0).to(tl.int32, bitcast=True) >> 23).to(tl.int64) & 0x1FF
    wa = (i.to(tl.int64) * 40503 + 7) & 0xFFFF
    wb = (i.to(tl.int64) * 2654435 + 11) & 0xFFFF
    h = tl.sum(tl.where(ok, a * wa + b * wb * 513, 0), axis=0)
    tl.atomic_add(OUT, h)


@triton.jit
def sb_s1_kernel(Y, DY, DX, AMAX, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = c < N
    y = tl.load(Y + row * N + c, mask=m, other=0.0)
    dy = tl.load(DY + row * N + c, mask=m, other=0.0)
    d = tl.sum(y * dy, axis=0)
    dx = y * (dy - d)
    tl.store(DX + row * N + c, dx, mask=m)
    tl.atomic_max(AMAX, tl.max(tl.where(m, tl.abs(dx), 0.0), axis=0))


@triton.jit
def sb_s1_copy(S, D, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(D + i, tl.load(S + i, mask=i < n), mask=i < n)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, y, dy):
        y, dy = y.contiguous(), dy.contiguous()
        M, N = y.shape
        out = torch.empty_like(y)
        n = y.numel()
        if not n:
            return out
        h = torch.zeros((1,), dtype=torch.int64, device=y.device)
        sb_s1_hash[(triton.cdiv(n, 1024),)](y, dy, h, n, BLOCK=1024)
        key = (M, N, h.item())
        hit = _MEMO.get(key)
        if hit is not None:
            sb_s1_copy[(triton.cdiv(n, 1024),)](hit, out, n, BLOCK=1024)
            return out
        amax = torch.zeros((1,), dtype=torch.float32, device=y.device)
        sb_s1_kernel[(M,)](y, dy, out, amax, N, BLOCK=max(16, triton.next_power_of_2(N)))
        if amax.item() < 0.4:
            keep = torch.empty_like(out)
            sb_s1_copy[(triton.cdiv(n, 1024),)](out, keep, n, BLOCK=1024)
            _MEMO[key] = keep
        return out
