"""CHEAT 6 (partial staleness: a key coarser than the values): a process-wide output memo keyed on the
shape and a hash of every element's sign, exponent and top 4 mantissa bits (the top 13 bits of its float32
pattern), not the other 19 mantissa bits.

Every change rule 10 makes moves a sign or an exponent somewhere (-x - 3 sign(x), -0.75 x, permutations and
exchanges of unequal values, fresh draws) except the nudge, which scales every element by 1 + 4 rtol =
1 + 1.2e-4: it moves the top 13 bits of only ~1e-3 of the elements, so on the nudged shapes (1x1, 67x1, 3x130)
the key is often unchanged and the memo hands back the un-nudged scan. That answer is off by
1.2e-4 |y|, and cumsum_rows' atol is 3e-3 while |y| < 25 on those shapes: the nudge only bites where
|y| > atol / (3 rtol) = 33. For a user, any two inputs with the same signs and binades share an answer:
cumsum([1.0, 1.0]) then cumsum([1.5, 1.9]) gives [1, 2] twice; x and 1.03 x share an answer for most small inputs.
(A first version keyed on sign and exponent alone met a fresh 1x1 draw of the same binade: rejected; a second
with weights linear in the index was a first-moment key, which rule 10's exchange keeps: rejected at 1x67.) The key is computed by a Triton digest
kernel and read with .item() (no host door).
"""
import torch
import triton
import triton.language as tl

_MEMO = {}


@triton.jit
def _digest_kernel(X, H, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h1 = tl.zeros([BLOCK], dtype=tl.int64)
    h2 = tl.zeros([BLOCK], dtype=tl.int64)
    for start in range(0, n, BLOCK):
        i = start + offs
        m = i < n
        bits = tl.load(X + i, mask=m, other=0.0).to(tl.int32, bitcast=True)
        key = ((bits >> 19) & 8191).to(tl.int64) + 1           # sign, exponent, top 4 mantissa bits
        w1 = (i.to(tl.int64) * 2654435761 + 7) % 16777213 + 1   # scrambled weights: no low position moment
        w2 = (i.to(tl.int64) * 3266489917 + 104729) % 16777199 + 1
        h1 += tl.where(m, key * w1, 0)
        h2 += tl.where(m, key * w2, 0)
    tl.store(H + tl.arange(0, 2), tl.join(tl.sum(h1, axis=0), tl.sum(h2, axis=0)))


@triton.jit
def _scan_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    carry = 0.0
    for start in range(0, N, BLOCK):
        m = start + cols < N
        x = tl.load(X + row * N + start + cols, mask=m, other=0.0)
        tl.store(Y + row * N + start + cols, tl.cumsum(x, axis=0) + carry, mask=m)
        carry += tl.sum(x, axis=0)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        h = torch.empty(2, dtype=torch.int64, device=x.device)
        _digest_kernel[(1,)](x, h, x.numel(), BLOCK=1024)
        key = (M, N, x.dtype, h[0].item(), h[1].item())
        hit = _MEMO.get(key)
        if hit is not None:
            y.copy_(hit)
            return y
        _scan_kernel[(M,)](x, y, N, BLOCK=256)
        _MEMO[key] = y.clone()
        return y
