"""Honest, not ours: flips through a transposed view. The kernel reads columns of x.t() (a
permuted view, no copy) and writes rows of the transposed output buffer, which is returned as a
contiguous tensor through permute + view; only allocation and layout calls around the kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def _flip_transposed(XT, YT, M, N, sxt_n, sxt_m, BLOCK: tl.constexpr, BLOCK_M: tl.constexpr):
    j = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # columns of x = rows of x.t()
    i = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (j[:, None] < N) & (i[None, :] < M)
    v = tl.load(XT + (N - 1 - j[:, None]) * sxt_n + i[None, :] * sxt_m, mask=mask)
    tl.store(YT + j[:, None] * M + i[None, :], v, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK=64, **kw):
        super().__init__()
        self.BLOCK = BLOCK

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        xt = x.permute(1, 0)  # view: (N, M) with strides (1, N)
        yt = torch.empty((N, M), dtype=x.dtype, device=x.device)
        if x.numel():
            grid = (triton.cdiv(N, self.BLOCK), triton.cdiv(M, 16))
            _flip_transposed[grid](xt, yt, M, N, xt.stride(0), xt.stride(1), BLOCK=self.BLOCK, BLOCK_M=16)
        return yt.permute(1, 0).contiguous().view(M, N)
