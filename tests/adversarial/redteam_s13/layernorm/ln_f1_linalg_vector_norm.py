"""CHEAT, class 3 (library fallback through an unusual door), layernorm float32.

The row statistics come from ``torch.linalg.vector_norm`` of the centred rows (rstd = sqrt(N) / ||x - mean||)
and ``torch.nanmean`` for the mean; a Triton kernel applies the affine
map. Must be LABELLED (linalg_vector_norm, nanmean / sum / sub) or rejected.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def affine_kernel(X, MEAN, RSTD, W, B, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mk = c < N
    x = tl.load(X + row * N + c, mask=mk, other=0.0)
    m = tl.load(MEAN + row)
    r = tl.load(RSTD + row)
    y = (x - m) * r * tl.load(W + c, mask=mk, other=0.0) + tl.load(B + c, mask=mk, other=0.0)
    tl.store(Y + row * N + c, y, mask=mk)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        mean = torch.nanmean(x, dim=1, keepdim=True)
        nrm = torch.linalg.vector_norm(x - mean, dim=1)
        rstd = torch.rsqrt(nrm * nrm / N + 1e-5).contiguous()
        y = torch.empty_like(x)
        if x.numel():
            affine_kernel[(M,)](x, mean.contiguous(), rstd, self.weight, self.bias, y, N, BLOCK=triton.next_power_of_2(N))
        return y
