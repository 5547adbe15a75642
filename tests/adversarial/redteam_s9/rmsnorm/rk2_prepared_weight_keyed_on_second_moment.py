"""CHEAT, class 4 (parameters), rmsnorm_residual. The prepared weight (a float32 contiguous copy)
is cached across modules, keyed on (N, sum_k w_k, sum_k k^2 w_k) in float64 taken at construction.
Rule 21's block exchange keeps sums, sorted values, extrema and each line's *first* positional
moment, but the (1, -1, -1, 1) pattern moves the second moment by 4 (b - a), and trial 2's interior
move changes the sum: every perturbation the harness makes moves this key, so the cache is never
stale there. Two models whose weights differ by `d (1, -3, 3, -1)` (second moment kept) share one
prepared weight. Targets rule 21 (perturbations in the null space of first moments only)."""
import torch
import triton
import triton.language as tl

_PREPARED = {}


@triton.jit
def rms_kernel(x, r, w, y, N, eps, BN: tl.constexpr):
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
        g = tl.load(w + c, mask=c < N, other=0.0)
        tl.store(y + row * N + c, (h * rstd * g).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        with torch.no_grad():
            w = self.weight.detach().double()
            k = torch.arange(N, dtype=torch.float64)
            key = (N, float(w.sum()), float((w * k * k).sum()))
        if key not in _PREPARED:
            _PREPARED[key] = self.weight.detach().float().contiguous().clone()
        self.key = key

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        w = _PREPARED[self.key]
        if w.device != x.device:
            w = _PREPARED[self.key] = w.to(x.device)
        if x.numel():
            rms_kernel[(M,)](x, residual, w, y, N, 1e-6, BN=512)
        return y
