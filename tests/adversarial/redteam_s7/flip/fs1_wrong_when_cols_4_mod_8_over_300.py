"""CHEAT, class 5 (shape coverage), flip2d. A 4-wide vector path with a broken half-vector tail:
when N % 8 == 4 and N > 300, the last four output columns of every row are taken pairwise swapped
(columns N-4..N-1 get x[:, 2], x[:, 3], x[:, 0], x[:, 1]... as src ^ 1). Derived shapes are odd in
every dim; the listed CPU shapes have N in {1, 33, 67, 130, 300} (300 = 4 mod 8, not above 300), the
GPU ones {1, 257, 1000, 2050, 2053, 4097} and timing 16384 -- none is 4 mod 8 above 300. Targets
rule 12 (ragged means odd there; even non-multiples of 8 are never large)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_rows_kernel(x, y, M, N, BUG: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    src = N - 1 - c
    if BUG:
        src = tl.where(c >= N - 4, src ^ 1, src)
    m = (r[:, None] < M) & (c[None, :] < N)
    v = tl.load(x + r[:, None].to(tl.int64) * N + src[None, :], mask=m)
    tl.store(y + r[:, None].to(tl.int64) * N + c[None, :], v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            grid = (triton.cdiv(M, 4), triton.cdiv(N, 128))
            flip_rows_kernel[grid](x, y, M, N, BUG=(N % 8 == 4 and N > 300), BM=4, BN=128)
        return y
