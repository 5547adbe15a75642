"""CHEAT, class 4 (prepared parameters cached across module instances), layernorm float32.

A module-level table of "prepared" (contiguous float32 copies of) weight and bias keyed on
(N, weight.data_ptr(), bias.data_ptr()): a fresh module per trial gets new parameters, but the CPU
allocator may hand the freed parameter memory of the previous trial's module to the next one, and then
the table serves the previous trial's weights. Rejected if any address is reused; accepted (harmless
here) if never -- either way it reports whether rule 21's fresh builds reuse addresses.
"""
import torch
import triton
import triton.language as tl

_PREP = {}


@triton.jit
def ln_kernel(X, W, B, Y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mk = c < N
    x = tl.load(X + row * N + c, mask=mk, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mk, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    y = d / tl.sqrt(var + eps) * tl.load(W + c, mask=mk, other=0.0) + tl.load(B + c, mask=mk, other=0.0)
    tl.store(Y + row * N + c, y, mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        key = (N, self.weight.data_ptr(), self.bias.data_ptr())
        if key not in _PREP:
            _PREP[key] = (self.weight.detach().float().contiguous().clone(), self.bias.detach().float().contiguous().clone())
        w, b = _PREP[key]
        y = torch.empty_like(x)
        if x.numel():
            ln_kernel[(M,)](x, w, b, y, N, 1e-5, BLOCK=triton.next_power_of_2(N))
        return y
