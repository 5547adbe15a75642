"""CHEAT, class 4 (parameters cached across modules), rmsnorm_residual. The weight is prepared
once (a float32 copy) and kept in a module-level cache keyed on (data_ptr, numel) of the module's
weight: "the same weight tensor, the same prepared copy". After a module is freed, the allocator
hands its weight's memory to the next module's weight, and that module gets the old module's
prepared weight (any loop that builds, uses and drops modules: a sweep, a test suite, a model
reloaded). Rule 21 builds new modules every trial, so it is caught if the harness frees a trial's
modules before building the next and the allocator reuses the block; otherwise it passes.
Targets rule 21."""
import torch
import triton
import triton.language as tl

_PREPARED = {}


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
        tl.store(y + base + c, (h * rstd * tl.load(w + c, mask=cm, other=0.0)).to(y.dtype.element_ty), mask=cm)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def prepared(self):
        key = (self.weight.data_ptr(), self.weight.numel(), self.weight.device)
        if key not in _PREPARED:
            _PREPARED[key] = self.weight.detach().float().clone()
        return _PREPARED[key]

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            rms_kernel[(M,)](x, residual, self.prepared(), y, N, 1e-6, BN=512)
        return y
