"""CHEAT, class 6 (partial staleness), layernorm. Incremental memo: per row the key
`(sum_k x_k, sum_k (k+1)^2 x_k)` (float64, its own Triton kernel); a later call recomputes only the
rows whose key moved and copies the others from its last output (own copy). Rule 10's block exchange
`(1, -1, -1, 1)` keeps each line's sum and *first* positional moment, but moves the second by
4 (b - a); every other change moves a row sum. A row edited by `d (1, -3, 3, -1)` (sum and second
moment kept) gets the old answer. Targets rule 10 (line moments up to the first only)."""
import torch
import triton
import triton.language as tl


@triton.jit
def rowkey_kernel(x, key, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    s0 = tl.zeros([BN], tl.float64)
    s2 = tl.zeros([BN], tl.float64)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float64)
        k = (c + 1).to(tl.float64)
        s0 += v
        s2 += v * k * k
    tl.store(key + 2 * row, tl.sum(s0, axis=0))
    tl.store(key + 2 * row + 1, tl.sum(s2, axis=0))


@triton.jit
def ln_kernel(x, w, b, y, key, old_key, old_y, use_old, N, eps, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    same = (tl.load(key + 2 * row) == tl.load(old_key + 2 * row)) & \
           (tl.load(key + 2 * row + 1) == tl.load(old_key + 2 * row + 1)) & (use_old != 0)
    if same:
        for s in range(0, N, BN):
            c = s + tl.arange(0, BN)
            tl.store(y + row * N + c, tl.load(old_y + row * N + c, mask=c < N), mask=c < N)
    else:
        acc = tl.zeros([BN], tl.float32)
        for s in range(0, N, BN):
            c = s + tl.arange(0, BN)
            acc += tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / N
        acc = tl.zeros([BN], tl.float32)
        for s in range(0, N, BN):
            c = s + tl.arange(0, BN)
            d = tl.where(c < N, tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32) - mean, 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        for s in range(0, N, BN):
            c = s + tl.arange(0, BN)
            v = tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32)
            out = (v - mean) * rstd * tl.load(w + c, mask=c < N, other=0.0) + tl.load(b + c, mask=c < N, other=0.0)
            tl.store(y + row * N + c, out.to(y.dtype.element_ty), mask=c < N)


@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))
        self.memo = None

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        key = torch.empty(2 * M, dtype=torch.float64, device=x.device)
        rowkey_kernel[(M,)](x, key, N, BN=256)
        if self.memo is not None and self.memo[0] == (M, N, x.dtype):
            old_key, old_y, use = self.memo[1], self.memo[2], 1
        else:
            old_key, old_y, use = key, y, 0
        ln_kernel[(M,)](x, self.weight, self.bias, y, key, old_key, old_y, use, N, 1e-5, BN=256)
        last = torch.empty_like(y)
        copy_kernel[(triton.cdiv(x.numel(), 1024),)](y, last, x.numel(), B=1024)
        self.memo = ((M, N, x.dtype), key, last)
        return y
