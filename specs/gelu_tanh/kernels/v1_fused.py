"""gelu_tanh v1: one fused Triton kernel, the textbook formula.

Each program loads BLOCK consecutive elements, computes 0.5 * x * (1 + tanh(z)) with
z = sqrt(2/pi) * (x + 0.044715 x^3) in float32 and stores one rounded result: one read and one
write of the tensor (2 * M * N * itemsize bytes) instead of v0's ten kernels. Triton's core
language has no tanh (libdevice's is a CUDA/HIP extern the CPU interpreter does not run), so
tanh(z) = 1 - 2 / (exp(2z) + 1) (exp overflowing to +inf gives 1, underflowing to 0 gives -1:
no NaN).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_tanh_kernel(X, Y, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh_z = 1.0 - 2.0 / (tl.exp(2.0 * z) + 1.0)
    y = 0.5 * x * (1.0 + tanh_z)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK=1024, num_warps=4):
        super().__init__()
        self.BLOCK, self.num_warps = BLOCK, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        _gelu_tanh_kernel[(triton.cdiv(n, self.BLOCK),)](x, y, n, BLOCK=self.BLOCK, num_warps=self.num_warps)
        return y
