"""column_sum v3: v2's split-M in one launch -- the last program of each column strip adds the
partials, in a fixed order -- over short row chunks, so the grid runs as several full waves.

v2 launches two kernels, and its first stage is sized to about one wave of 8 programs per SM:
when fewer fit at once (registers), the programs that do not fit run as a second, mostly empty
wave, with the DRAM system half idle while they finish; then the second kernel's launch and its
few programs add their own start-up and tail. Here program (j, k) sums CHUNK_M rows of column
strip j with v2's coalesced tiles, stores its float32 partial row, and increments strip j's
arrival counter (after a barrier, with release/acquire ordering at GPU scope, so its partial is
visible before its arrival counts). The program that arrives last -- whichever it is -- reads the
strip's SPLIT partials from L2, 32 partial rows per load (one L2 round trip per 32, not per
partial: a serial walk of SPLIT dependent loads would make these last programs the run's tail),
and adds them with a reduction tree of fixed shape, so the sum and its rounding are the same on
every call (no float atomics), and sets the counter back to zero for the next call (so the module allocates its counters once, zeroed). With CHUNK_M = 128 or 256
rows the timing shape has thousands of programs: a tail of at most one short program per SM
instead of a second wave, and one launch instead of two. A tile of BLOCK_M = 32 or 64 rows x
BLOCK_N = 128 columns spread over 8 warps keeps 40 or 64 registers per thread (sm_90 compile of
the timing shape, bfloat16), so 4 to 6 programs fit per SM, each with an 8-16 KB load in flight.
Extra traffic: the partials, 2 * SPLIT * N * 4 bytes (4 MiB at the timing shape with CHUNK_M =
256, under 2% of x in bfloat16).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _split_m_one_launch_kernel(X, P, Y, CNT, M, N, SPLIT, CHUNK_M: tl.constexpr, BLOCK_M: tl.constexpr,
                               BLOCK_N: tl.constexpr, SPLIT_BLOCK: tl.constexpr):
    j = tl.program_id(0)
    k = tl.program_id(1)
    cols = j * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    row0 = k * CHUNK_M
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(row0, row0 + CHUNK_M, BLOCK_M):
        rows = (start + tl.arange(0, BLOCK_M)).to(tl.int64)
        mask = (rows < M)[:, None] & cmask[None, :]
        acc += tl.load(X + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(P + k.to(tl.int64) * N + cols, tl.sum(acc, axis=0), mask=cmask)
    tl.debug_barrier()  # every thread's partial is stored before the arrival is counted
    arrived = tl.atomic_add(CNT + j, 1, sem="acq_rel", scope="gpu")
    if arrived == SPLIT - 1:  # the last program of strip j: add the partials in a fixed order
        # SPLIT_BLOCK partial rows per load: one L2 round trip per 32 chunks instead of one per chunk
        # (a serial walk of SPLIT dependent loads made the last program of each strip the tail).
        # tl.sum's tree has a fixed order for a fixed config, so the bits are the same on every call.
        total = tl.zeros([BLOCK_N], tl.float32)
        for kk0 in range(0, SPLIT, SPLIT_BLOCK):
            kks = (kk0 + tl.arange(0, SPLIT_BLOCK)).to(tl.int64)
            pmask = (kks < SPLIT)[:, None] & cmask[None, :]
            part = tl.load(P + kks[:, None] * N + cols[None, :], mask=pmask, other=0.0, cache_modifier=".cg")
            total += tl.sum(part, axis=0)
        tl.store(Y + cols, total.to(Y.dtype.element_ty), mask=cmask)
        tl.atomic_xchg(CNT + j, 0, sem="relaxed", scope="gpu")  # ready for the next call


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=64, BLOCK_N=128, CHUNK_M=256, num_warps=8):
        super().__init__()
        assert CHUNK_M % BLOCK_M == 0
        self.BLOCK_M, self.BLOCK_N, self.CHUNK_M, self.num_warps = BLOCK_M, BLOCK_N, CHUNK_M, num_warps
        self._counters = {}  # (device, strips) -> int32 arrival counters, zero between calls

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        strips = triton.cdiv(N, self.BLOCK_N)
        split = triton.cdiv(M, self.CHUNK_M)
        key = (x.device, strips)
        if key not in self._counters:
            self._counters[key] = torch.zeros(strips, dtype=torch.int32, device=x.device)
        partials = torch.empty((split, N), dtype=torch.float32, device=x.device)
        _split_m_one_launch_kernel[(strips, split)](x, partials, y, self._counters[key], M, N, split,
                                                    CHUNK_M=self.CHUNK_M, BLOCK_M=self.BLOCK_M,
                                                    BLOCK_N=self.BLOCK_N, SPLIT_BLOCK=32, num_warps=self.num_warps)
        return y
