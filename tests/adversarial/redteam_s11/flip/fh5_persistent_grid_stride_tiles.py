"""HONEST, flip2d, a persistent grid (unlike the ladder's one-program-per-tile launches): a fixed
number of programs (a few per SM on a GPU, 8 on the interpreter) walks the (row block, column
block) tiles in a grid-stride loop, tile t = pid, pid + P, pid + 2P, ..., the column block fastest,
each tile a masked mirrored-address load and a unit-stride store (bit moves: NaN payloads and -0.0
survive). Tiles past the last are masked out entirely (the loop bound is the same for every
program). (A first version reversed contiguous loads in registers with ``tl.flip``, whose XOR
butterflies take about a minute per 37x1000 call on the interpreter: replaced before the run.)"""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_persistent_kernel(X, Y, M, N, n_col_tiles, n_tiles, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    for t in range(pid, n_tiles + step - 1, step):
        rows = ((t // n_col_tiles) * BM + tl.arange(0, BM)).to(tl.int64)
        cols = ((t % n_col_tiles) * BN + tl.arange(0, BN)).to(tl.int64)
        live = (rows * 0 + t) < n_tiles  # a tensor: a scalar & tensor mask is no bool mask on the interpreter
        m = ((rows < M) & live)[:, None] & (cols < N)[None, :]
        v = tl.load(X + rows[:, None] * N + (N - 1 - cols)[None, :], mask=m)
        tl.store(Y + rows[:, None] * N + cols[None, :], v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        BM, BN = (4, 1024) if x.is_cuda else (8, 1024)
        n_col = triton.cdiv(N, BN)
        n_tiles = triton.cdiv(M, BM) * n_col
        progs = torch.cuda.get_device_properties(x.device).multi_processor_count * 4 if x.is_cuda else 8
        flip_persistent_kernel[(max(1, min(progs, n_tiles)),)](x, y, M, N, n_col, n_tiles, BM=BM, BN=BN)
        return y
