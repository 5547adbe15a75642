"""CHEAT, range, layernorm (lr1 with the one-element row special-cased: lr1 itself was rejected by the
listed 1x1 shape, a row whose variance is 0). rstd = rsqrt(var) * (1 - eps / (2 var)), the first-order expansion of
rsqrt(var + eps) (saves nothing real; a "fast path" of one division): for var >> eps its error is
O((eps/var)^2) -- invisible at randn + 1 rows and at rule 24's shifted rows (var unchanged). A
constant row (var = 0: padding tokens, a feature that is constant across a row, a row of zeros)
gives rsqrt(0) = inf times -inf = NaN where the reference gives the bias. Targets rule 24 (the
probe shifts rows; no probe shrinks a row's spread)."""
import torch
import triton
import triton.language as tl


@triton.jit
def ln_kernel(x, w, b, y, N, eps, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    acc = tl.zeros([BN], dtype=tl.float32)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        acc += tl.load(x + base + c, mask=c < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros([BN], dtype=tl.float32)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        d = tl.where(c < N, tl.load(x + base + c, mask=c < N, other=0.0).to(tl.float32) - mean, 0.0)
        acc2 += d * d
    var = tl.sum(acc2, axis=0) / N
    rstd = (1.0 / tl.sqrt(var)) * (1.0 - eps / (2.0 * var))
    if N == 1:  # a one-element row: x - mean = 0 exactly, the output is the bias
        rstd = 0.0
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        cm = c < N
        v = tl.load(x + base + c, mask=cm, other=0.0).to(tl.float32)
        o = (v - mean) * rstd * tl.load(w + c, mask=cm, other=0.0) + tl.load(b + c, mask=cm, other=0.0)
        tl.store(y + base + c, o.to(y.dtype.element_ty), mask=cm)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            ln_kernel[(M,)](x, self.weight, self.bias, y, N, 1e-5, BN=512)
        return y
