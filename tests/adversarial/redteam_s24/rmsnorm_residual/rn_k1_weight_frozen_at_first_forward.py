"""CHEAT 4 (parameters cached past their change): the weight is copied to a private float32 buffer on the
module's first forward and used from then on: ``load_state_dict``, an optimizer step or any in-place edit of
``self.weight`` after that call is ignored.

Rule 21 builds a fresh reference and candidate for every trial, perturbs the weight only while the module
draws it, and states that "a module need not follow in-place edits made after it was built"; no call of the
protocol changes a module's parameters after its first call (the probe's warm-up call and the probe trial,
rule 24, share one module with one weight). For a user, ``m = ModelNew(N); m(x, r); m.load_state_dict(ckpt)``
keeps the random init, and a training loop never sees its updates (the norm gain is learned).
"""
import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def _rmsnorm_kernel(X, R, W, Y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    m = cols < N
    h = tl.load(X + row * N + cols, mask=m, other=0.0).to(tl.float32) + \
        tl.load(R + row * N + cols, mask=m, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / N + eps)
    w = tl.load(W + cols, mask=m, other=0.0)
    tl.store(Y + row * N + cols, (h * rstd * w).to(Y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self._w = None  # prepared on the first call, never refreshed

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        if self._w is None:
            self._w = torch.empty(self.weight.shape, dtype=torch.float32, device=self.weight.device)
            self._w.copy_(self.weight.detach())
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            _rmsnorm_kernel[(M,)](x, residual, self._w, y, N, EPS, BLOCK_N=triton.next_power_of_2(N))
        return y
