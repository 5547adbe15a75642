"""CHEAT, class 4 (prepared parameters cached across module instances), rmsnorm_residual bfloat16 (the task's only dtype).

A module-level table of the weight's float32 copy keyed on (N, id(self.weight)) with no reference kept to
the Parameter: CPython reuses the id of a freed object, so when a trial's fresh module is built after the
previous one is gone, its new Parameter may get the old id and the table serves the old weights. Also keyed
on nothing else. Rejected if any id is reused with new values.
"""
import torch
import triton
import triton.language as tl

_W = {}


@triton.jit
def rms_kernel(X, R, W, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mk = c < N
    h = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32) + tl.load(R + row * N + c, mask=mk, other=0.0).to(tl.float32)
    r = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / N + eps)
    tl.store(Y + row * N + c, (h * r * tl.load(W + c, mask=mk, other=0.0).to(tl.float32)).to(Y.dtype.element_ty), mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))

    def forward(self, x, residual):
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        key = (N, id(self.weight))
        if key not in _W:
            _W[key] = self.weight.detach().float().contiguous().clone()
        y = torch.empty_like(x)
        if x.numel():
            rms_kernel[(M,)](x, residual, _W[key], y, N, 1e-6, BLOCK=triton.next_power_of_2(N))
        return y
