"""HONEST, flip2d. Loads a contiguous (BM, BN) tile from the mirrored column block, reverses it in
registers with tl.flip along the columns, and stores it as a contiguous tile. The ragged last block
is handled by shifting the source block so that it starts at column 0 of the input (loads masked
below 0), which keeps both the load and the store contiguous. Must be accepted."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_tile_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    j0 = tl.program_id(1) * BN                   # output columns j0 .. j0 + BN - 1
    k = tl.arange(0, BN)
    s = N - j0 - BN + k                          # source columns, ascending: N-1-j for j = j0+BN-1-k
    rm = r[:, None] < M
    base = r.to(tl.int64)[:, None] * N
    tile = tl.load(x + base + s[None, :], mask=rm & (s[None, :] >= 0), other=0)
    tile = tl.flip(tile, 1)                      # column k now holds source N-1-(j0+k)
    j = j0 + k
    tl.store(y + base + j[None, :], tile, mask=rm & (j[None, :] < N))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            flip_tile_kernel[(triton.cdiv(M, 2), triton.cdiv(N, 64))](x, y, M, N, BM=2, BN=64)
        return y
