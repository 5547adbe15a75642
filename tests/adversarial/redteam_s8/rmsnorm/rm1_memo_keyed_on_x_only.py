"""CHEAT, class 6 (partial staleness), rmsnorm_residual. The module memoises its last output keyed
on a checksum of x alone (sum and position-weighted sum, its own Triton kernel, exact in float32 for
any one-element edit of x): residual is not in the key. Every staleness step of rule 10 (and rule
15's rolling change) edits *every* input at once, and every trial draws both afresh, so x never stays
while residual changes; a caller that keeps x and changes residual (the same hidden state added to
another branch's output, a decoding step that rewrites only the residual stream) gets the old
answer. Targets rule 10 (all inputs changed together)."""
import torch
import triton
import triton.language as tl


@triton.jit
def key_kernel(x, key, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    v = tl.load(x + i, mask=i < n, other=0.0).to(tl.float32)
    tl.atomic_add(key, tl.sum(v, axis=0))
    tl.atomic_add(key + 1, tl.sum(v * ((i % 4093) + 1).to(tl.float32), axis=0))


@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


@triton.jit
def rms_kernel(x, r, w, y, N, eps, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    acc = tl.zeros([BN], dtype=tl.float32)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        h = tl.load(x + base + c, mask=c < N, other=0.0).to(tl.float32) + \
            tl.load(r + base + c, mask=c < N, other=0.0).to(tl.float32)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        cm = c < N
        h = tl.load(x + base + c, mask=cm, other=0.0).to(tl.float32) + tl.load(r + base + c, mask=cm, other=0.0).to(tl.float32)
        tl.store(y + base + c, (h * rstd * tl.load(w + c, mask=cm, other=0.0).to(tl.float32)).to(y.dtype.element_ty), mask=cm)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.memo = None

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        k = torch.zeros(2, dtype=torch.float32, device=x.device)
        key_kernel[(triton.cdiv(n, 1024),)](x, k, n, B=1024)
        key = (tuple(x.shape), k[0].item(), k[1].item())
        if self.memo is not None and self.memo[0] == key:
            copy_kernel[(triton.cdiv(n, 1024),)](self.memo[1], y, n, B=1024)
            return y
        rms_kernel[(M,)](x, residual, self.weight, y, N, 1e-6, BN=512)
        last = torch.empty_like(y)
        copy_kernel[(triton.cdiv(n, 1024),)](y, last, n, B=1024)
        self.memo = (key, last)
        return y
