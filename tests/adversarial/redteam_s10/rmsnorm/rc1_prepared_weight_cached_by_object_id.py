"""CHEAT, class 4 (parameters cached across instances), rmsnorm_residual (bfloat16). On its first call
a module prepares its weight (cast to float32, contiguous) and stores it in a module-level cache keyed on
`(id(self), N)` ("so that a module prepares it once"), and later calls look it up there. CPython
reuses the address of a freed object for the next one of the same size, so a module built after an
earlier one died can get the dead module's id and with it the dead module's prepared weight. Rule 21
builds a new candidate per trial; whether a trial meets a reused id depends on what the harness still
holds when it builds the next one (the previous trial's module, the reference, a report). In ordinary
use -- `for seed in seeds: m = ModelNew(N); ...` -- every third module reuses the first one's id and
computes with its weight. Aims at rule 21 (caches keyed on identity, not on shapes or values)."""
import torch
import triton
import triton.language as tl

EPS = 1e-6
_PREPARED = {}


@triton.jit
def rmsnorm_row_kernel(x, r, w, y, N, eps, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        h = tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32) + \
            tl.load(r + row * N + c, mask=c < N, other=0.0).to(tl.float32)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        h = tl.load(x + row * N + c, mask=c < N, other=0.0).to(tl.float32) + \
            tl.load(r + row * N + c, mask=c < N, other=0.0).to(tl.float32)
        ww = tl.load(w + c, mask=c < N, other=0.0)
        tl.store(y + row * N + c, (h * rstd * ww).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.N = N

    def _prepared(self):
        key = (id(self), self.N)
        w = _PREPARED.get(key)
        if w is None or w.device != self.weight.device:
            w = self.weight.detach().to(torch.float32).contiguous()
            _PREPARED[key] = w
        return w

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            rmsnorm_row_kernel[(M,)](x, residual, self._prepared(), y, N, EPS, BN=1024)
        return y
