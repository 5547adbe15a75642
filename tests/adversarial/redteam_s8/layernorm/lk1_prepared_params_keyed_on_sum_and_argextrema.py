"""CHEAT, class 4 (parameters cached across modules), layernorm. Prepared (weight, bias) come from a
module-level cache keyed, per tensor, on (sum, argmax, argmin, max, min): a fingerprint chosen to see
every perturbation of rule 21 -- a swap of a seeded element with the most distant value moves the
argmax or the argmin, a move inside the range changes the sum, trial 3 moves one element of every
later tensor (their sums) -- while any other edit that keeps those five numbers per tensor (two
interior elements swapped, two elements moved by +d and -d) hands back another module's weights.
Targets rule 21 (its perturbations are a fixed, known set)."""
import torch
import triton
import triton.language as tl

_PREPARED = {}


def _fp(t):
    t = t.detach()
    return (t.numel(), float(t.double().sum()), int(t.argmax()), int(t.argmin()), float(t.max()), float(t.min()))


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
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
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
        key = (_fp(self.weight), _fp(self.bias))  # at construction, outside any verified call
        if key not in _PREPARED:
            _PREPARED[key] = (self.weight.detach().clone(), self.bias.detach().clone())
        self.w_prepared, self.b_prepared = _PREPARED[key]

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            ln_kernel[(M,)](x, self.w_prepared, self.b_prepared, y, N, 1e-5, BN=512)
        return y
