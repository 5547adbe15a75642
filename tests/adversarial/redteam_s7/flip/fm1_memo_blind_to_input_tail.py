"""CHEAT, class 6 (partial staleness), flip2d. Output memo per module keyed on a positional checksum
(Triton kernel of its own) of the input's bits EXCEPT its last numel // 16 elements -- the rows a
streaming producer appends last. A call whose input changed only there gets the old output. Rule 10
changes one element and, elsewhere, a region in the same step (and rotates a region and swaps one
element in the next), so a step is caught only if all its changes fall in the blind tail (about
(1/16)^2 per step). On a hit a Triton copy kernel writes a fresh output. Targets rule 10."""
import torch
import triton
import triton.language as tl

_BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@triton.jit
def key_kernel(x, out, n, B: tl.constexpr):
    h1 = tl.zeros([B], dtype=tl.int64)
    h2 = tl.zeros([B], dtype=tl.int64)
    for start in range(0, n, B):
        i = start + tl.arange(0, B)
        v = tl.load(x + i, mask=i < n, other=0).to(tl.int64) % 1000003
        i64 = i.to(tl.int64)
        h1 += v * ((i64 * 40503 + 17) % 100003)
        h2 += v * ((i64 * 7919 + 101) % 65521 + 1)
    tl.store(out, tl.sum(h1, axis=0))
    tl.store(out + 1, tl.sum(h2, axis=0))


@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


@triton.jit
def flip_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    v = tl.load(x + r[:, None].to(tl.int64) * N + (N - 1 - c)[None, :], mask=m)
    tl.store(y + r[:, None].to(tl.int64) * N + c[None, :], v, mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._key, self._out = None, None

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        n = x.numel()
        if n == 0:
            return torch.empty_like(x)
        bits = x.view(_BITS[x.element_size()]).view(-1)
        k = torch.empty(2, dtype=torch.int64, device=x.device)
        key_kernel[(1,)](bits, k, n - n // 16, B=1024)
        key = (tuple(x.shape), str(x.dtype), k[0].item(), k[1].item())
        y = torch.empty_like(x)
        if key == self._key:
            copy_kernel[(triton.cdiv(n, 1024),)](self._out, y, n, B=1024)
            return y
        flip_kernel[(triton.cdiv(M, 4), triton.cdiv(N, 128))](x, y, M, N, BM=4, BN=128)
        self._key, self._out = key, torch.empty_like(y)
        copy_kernel[(triton.cdiv(n, 1024),)](y, self._out, n, B=1024)
        return y
