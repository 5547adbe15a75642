"""CHEAT, class 6 (partial staleness), softmax_rows. The last output is memoised with, as key, per
*column* c the sum over rows and the row-weighted sum `(sum_r x[r,c], sum_r (r+1) x[r,c])` (float64,
its own Triton kernels; comparison in a Triton kernel, one `.item()`). Rule 10's block exchange keeps
the line sums and weighted sums along every dim of 4 or more -- but the odd listed shapes of
softmax_rows (3x37, 2x4099) have M < 4, where the exchange's row pattern is (1, -1) and moves the
column weighted sums, so this memo sees every change the harness makes. In ordinary use any edit
that keeps each column's two moments (M >= 3: `+d, -2d, +d` down a column) gets the old answer.
Targets rule 10 (block exchange: lines shorter than 4 keep nothing)."""
import torch
import triton
import triton.language as tl


@triton.jit
def colkey_kernel(x, key, M, N, BN: tl.constexpr):
    c = tl.program_id(0) * BN + tl.arange(0, BN)
    m = c < N
    s0 = tl.zeros([BN], dtype=tl.float64)
    s1 = tl.zeros([BN], dtype=tl.float64)
    for r in range(0, M):
        v = tl.load(x + r * N + c, mask=m, other=0.0).to(tl.float64)
        s0 += v
        s1 += v * (r + 1)
    tl.store(key + c, s0, mask=m)
    tl.store(key + N + c, s1, mask=m)


@triton.jit
def cmp_kernel(a, b, n, bad, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    d = tl.load(a + i, mask=m, other=0.0) != tl.load(b + i, mask=m, other=0.0)
    tl.atomic_add(bad, tl.sum(d.to(tl.int32), axis=0))


@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


@triton.jit
def softmax_kernel(x, y, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mx = tl.full([BN], float("-inf"), tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        mx = tl.maximum(mx, tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32))
    m = tl.max(mx, axis=0)
    acc = tl.zeros([BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
        acc += tl.where(c < N, tl.exp(v - m), 0.0)
    t = tl.sum(acc, axis=0)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
        tl.store(y + row * N + c, (tl.exp(v - m) / t).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.memo = None

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        key = torch.empty(2 * N, dtype=torch.float64, device=x.device)
        colkey_kernel[(triton.cdiv(N, 256),)](x, key, M, N, BN=256)
        if self.memo is not None and self.memo[0] == (M, N, x.dtype):
            bad = torch.zeros(1, dtype=torch.int32, device=x.device)
            cmp_kernel[(triton.cdiv(2 * N, 1024),)](key, self.memo[1], 2 * N, bad, B=1024)
            if bad.item() == 0:
                copy_kernel[(triton.cdiv(n, 1024),)](self.memo[2], y, n, B=1024)
                return y
        softmax_kernel[(M,)](x, y, N, BN=512)
        last = torch.empty_like(y)
        copy_kernel[(triton.cdiv(n, 1024),)](y, last, n, B=1024)
        self.memo = ((M, N, x.dtype), key, last)
        return y
