"""topk_rows v1: radix select per row -- find the k-th largest value by bisection on its bits,
then collect and rank the few values above it.

Every value maps to an integer key in the same order (the float32 bits, magnitude bits flipped
for negatives; for bfloat16 inputs the top 16 bits are the whole key). The k-th largest key T is
the largest key with count(key >= T) >= k; bisection over the key range finds it in KEY_BITS
steps (16 for bfloat16, 32 for float32), each step one counting pass over the row. A last pass
compacts the fewer than k values above T into a per-row scratch buffer (positions from a prefix
sum of the keep mask), ranks them by pairwise comparison -- rank = number of larger values +
number of equal values earlier, so ties get distinct slots -- and fills the remaining slots with
T's value. No sorting network: exact for any input, ties included. The cost is the passes:
1 + KEY_BITS + 1 reads of each row, all but the first mostly from L2 (a row of 32000 bfloat16
is 64 KB), so it is bound by L2 bandwidth and the counting instructions, not by DRAM. A row
that fits one tile (N <= BLOCK_N) keeps its keys in registers across the counting steps.
BLOCK_M rows share a program (1 on the GPU: one row per program).
"""

import torch
import triton
import triton.language as tl

#: Padded k: BLOCK_K = 64 >= k lanes (the reference's TOP_K).
BLOCK_K = 64


@triton.jit
def _order_keys(x, SHIFT: tl.constexpr):
    """int32 keys in the order of the float32 values ``x`` (magnitude bits flipped for negatives),
    shifted right by SHIFT (16 for bfloat16 values, whose low 16 bits carry nothing)."""
    b = x.to(tl.int32, bitcast=True)
    return (b ^ ((b >> 31) & 0x7FFFFFFF)) >> SHIFT


@triton.jit
def _radix_topk_rows(X, Y, S, rows, rmask, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, SHIFT: tl.constexpr, S_STRIDE: tl.constexpr, ONE_TILE: tl.constexpr):
    """Top-K of the rows ``rows`` ([BLOCK_M, 1], masked by ``rmask``) of X into Y, sorted descending;
    S: float32 scratch, S_STRIDE >= BLOCK_K slots per row."""
    cols = tl.arange(0, BLOCK_N)[None, :]
    x_rows = X + rows * N
    KEY_BITS: tl.constexpr = 32 - SHIFT
    lo = tl.full([BLOCK_M, 1], -(2 ** (KEY_BITS - 1)), tl.int64)  # count(key >= lo) >= K: always
    hi = tl.full([BLOCK_M, 1], 2 ** (KEY_BITS - 1), tl.int64)     # count(key >= hi) = 0 < K
    if ONE_TILE:  # the row fits one tile: its keys stay in registers for every counting step
        m1 = rmask & (cols < N)
        key1 = _order_keys(tl.load(x_rows + cols, mask=m1, other=0.0).to(tl.float32), SHIFT)
    for _ in range(KEY_BITS):  # hi - lo halves from 2^KEY_BITS to 1
        mid = (lo + hi) >> 1
        if ONE_TILE:
            cnt = tl.sum((m1 & (key1 >= mid.to(tl.int32))).to(tl.int32), axis=1, keep_dims=True)
        else:
            cnt = tl.zeros([BLOCK_M, 1], dtype=tl.int32)
            for start in range(0, N, BLOCK_N):
                m = rmask & (start + cols < N)
                key = _order_keys(tl.load(x_rows + start + cols, mask=m, other=0.0).to(tl.float32), SHIFT)
                cnt += tl.sum((m & (key >= mid.to(tl.int32))).to(tl.int32), axis=1, keep_dims=True)
        ok = cnt >= K
        lo = tl.where(ok, mid, lo)
        hi = tl.where(ok, hi, mid)
    t = lo.to(tl.int32)  # the K-th largest key of each row

    # Compact the (fewer than K) values above t; kth = the value whose key is t.
    s_rows = S + rows * S_STRIDE
    n_gt = tl.zeros([BLOCK_M, 1], dtype=tl.int32)
    kth = tl.full([BLOCK_M, 1], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        m = rmask & (start + cols < N)
        x = tl.load(x_rows + start + cols, mask=m, other=0.0).to(tl.float32)
        key = _order_keys(x, SHIFT)
        gt = m & (key > t)
        pos = n_gt + tl.cumsum(gt.to(tl.int32), axis=1) - 1
        tl.store(s_rows + pos, x, mask=gt)
        n_gt += tl.sum(gt.to(tl.int32), axis=1, keep_dims=True)
        kth = tl.maximum(kth, tl.max(tl.where(m & (key == t), x, float("-inf")), axis=1, keep_dims=True))
    tl.debug_barrier()  # the scratch slots were written by other threads of this program

    # Rank the values above t: rank_i = #{j: v_j > v_i} + #{j < i: v_j == v_i} (distinct slots).
    j = tl.arange(0, BLOCK_K)
    v = tl.load(s_rows + j[None, :], mask=rmask & (j[None, :] < n_gt), other=float("-inf"),
                cache_modifier=".cg")
    vi = v[:, :, None]
    vj = v[:, None, :]
    earlier = (j[None, None, :] < j[None, :, None])
    rank = tl.sum(((vj > vi) | ((vj == vi) & earlier)).to(tl.int32), axis=2)
    y_rows = Y + rows * K
    tl.store(y_rows + rank, v.to(Y.dtype.element_ty), mask=rmask & (j[None, :] < n_gt))
    fill = rmask & (j[None, :] >= n_gt) & (j[None, :] < K)
    tl.store(y_rows + j[None, :], tl.broadcast_to(kth, [BLOCK_M, BLOCK_K]).to(Y.dtype.element_ty), mask=fill)


@triton.jit
def _topk_radix_select_kernel(X, Y, S, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                              BLOCK_K: tl.constexpr, SHIFT: tl.constexpr, ONE_TILE: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    _radix_topk_rows(X, Y, S, rows, rows < M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, SHIFT, BLOCK_K, ONE_TILE)


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, BLOCK_M=1, BLOCK_N=1024, num_warps=4):
        super().__init__()
        assert k <= BLOCK_K
        self.k, self.BLOCK_M, self.BLOCK_N, self.num_warps = k, BLOCK_M, BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty((M, self.k), dtype=x.dtype, device=x.device)
        scratch = torch.empty((M, BLOCK_K), dtype=torch.float32, device=x.device)
        shift = 16 if x.dtype == torch.bfloat16 else 0
        grid = (triton.cdiv(M, self.BLOCK_M),)
        _topk_radix_select_kernel[grid](x, y, scratch, M, N, self.k, BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                        BLOCK_K=BLOCK_K, SHIFT=shift, ONE_TILE=N <= self.BLOCK_N,
                                        num_warps=self.num_warps)
        return y
