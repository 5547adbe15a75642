"""column_sum v2: split the rows too (split-M), then a deterministic second stage.

v1 has one program per column strip. Here the grid is (column strips) x (row chunks), sized to
about 8 programs per SM: program (j, k) sums its chunk of rows for BLOCK_N columns with v1's
coalesced tiles and writes one float32 partial row to a (SPLIT, N) buffer; a second kernel sums
the SPLIT partials of each column in a fixed order and rounds once to the element type. Same
coalesced read of x, (M * N + N) * itemsize bytes, plus 2 * SPLIT * N * 4 bytes of partials (about 1 MiB
at the timing shape, under 0.5% of x); enough programs to keep every SM's loads in flight; no
atomics, so every call returns the same bits.
"""

import torch
import triton
import triton.language as tl

#: programs per SM the first stage aims for
PROGRAMS_PER_SM = 8


@triton.jit
def _partial_sums_kernel(X, P, M, N, CHUNK, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    k = tl.program_id(1)
    row0 = k * CHUNK
    row_end = tl.minimum(row0 + CHUNK, M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(row0, row_end, BLOCK_M):
        rows = (start + tl.arange(0, BLOCK_M)).to(tl.int64)
        mask = (rows < row_end)[:, None] & cmask[None, :]
        acc += tl.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(P + k.to(tl.int64) * N + cols, tl.sum(acc, axis=0), mask=cmask)


@triton.jit
def _combine_kernel(P, Y, N, SPLIT, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    acc = tl.zeros([BLOCK_N], tl.float32)
    for k in range(0, SPLIT):
        acc += tl.load(P + k * N + cols, mask=cmask, other=0.0)
    tl.store(Y + cols, acc.to(Y.dtype.element_ty), mask=cmask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=32, BLOCK_N=128, num_warps=4):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.num_warps = BLOCK_M, BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        strips = triton.cdiv(N, self.BLOCK_N)
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 1
        split = max(1, min(triton.cdiv(PROGRAMS_PER_SM * sms, strips), triton.cdiv(M, self.BLOCK_M)))
        chunk = triton.cdiv(triton.cdiv(M, split), self.BLOCK_M) * self.BLOCK_M  # whole tiles per chunk
        split = triton.cdiv(M, chunk)
        partials = torch.empty((split, N), dtype=torch.float32, device=x.device)
        _partial_sums_kernel[(strips, split)](x, partials, M, N, chunk, BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                              num_warps=self.num_warps)
        _combine_kernel[(strips,)](partials, y, N, split, BLOCK_N=self.BLOCK_N, num_warps=self.num_warps)
        return y
