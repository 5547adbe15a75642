"""topk_rows v1: a threshold from group maxima, a filter that keeps about a hundred candidates
per row, and one pairwise ranking in registers (streaming: two passes over each row in tiles).

Sorting is not needed for a top-k, and neither is a bisection over the values' bits (a radix
select reads the row once per key bit). Most elements cannot be in the top k, and one cheap pass
says which: split the row into G = 128 groups (element i in group i % G) and keep each group's
maximum. Those maxima are distinct elements, so for t = the k-th largest group maximum (found by
ranking the G maxima against each other), at least k elements are >= t: every value of the top k
passes the filter x >= t, ties included. For standard normal rows of 32000 about 90 elements pass
(the 64 group maxima at or above t plus the other large elements of those groups; 115 at most
over 2000 rows), whatever N is.

Pass 1 streams the row once from DRAM in BLOCK_N tiles, keeping G running maxima (no sort, no
scan). Pass 2 streams it again -- just read, so mostly from L2 -- and compacts the elements >= t
into a per-row scratch buffer of CAP slots (positions from a prefix sum of the keep mask). After a
barrier (other threads of the program wrote the slots; the loads bypass L1), the candidates are
ranked in registers by pairwise comparison (CAP x CAP compares, ties broken by position) and each
of the first k is stored at its rank. A row with more than CAP candidates (many equal values at
the top) takes a radix select over the whole row (bisection on order-preserving integer keys, one
counting pass per key bit), so the answer is exact for any input.
"""

import torch
import triton
import triton.language as tl

#: Padded k: BLOCK_K = 64 >= k lanes (the reference's TOP_K); G: groups of the threshold pass.
BLOCK_K = 64
G = 128


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
    S: float32 scratch, S_STRIDE >= BLOCK_K slots per row (the exact fallback)."""
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
def _topk_threshold_kernel(X, Y, S, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, G: tl.constexpr, CAP: tl.constexpr, SHIFT: tl.constexpr,
                           ONE_TILE: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    rmask = rows < M
    x_rows = X + rows * N

    # Pass 1: the maximum of each of the G groups (a tile viewed as [BLOCK_M, R, G]: column g is group g).
    R: tl.constexpr = BLOCK_N // G
    r3 = tl.arange(0, R)[None, :, None] * G + tl.arange(0, G)[None, None, :]
    rows3 = rows[:, :, None]
    gmax = tl.full([BLOCK_M, G], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        m3 = (rows3 < M) & (start + r3 < N)
        x3 = tl.load(X + rows3 * N + start + r3, mask=m3, other=float("-inf")).to(tl.float32)
        gmax = tl.maximum(gmax, tl.max(x3, axis=1))
    # t = the K-th largest group maximum: the largest g_i with #{j: g_j >= g_i} >= K (empty groups are -inf).
    n_ge = tl.sum((gmax[:, None, :] >= gmax[:, :, None]).to(tl.int32), axis=2)
    t = tl.max(tl.where(n_ge >= K, gmax, float("-inf")), axis=1, keep_dims=True)

    # Pass 2: compact the elements >= t into the row's CAP scratch slots.
    cols = tl.arange(0, BLOCK_N)[None, :]
    s_rows = S + rows * CAP
    count = tl.zeros([BLOCK_M, 1], dtype=tl.int32)
    for start in range(0, N, BLOCK_N):
        m = rmask & (start + cols < N)
        x = tl.load(x_rows + start + cols, mask=m, other=float("-inf")).to(tl.float32)
        keep = m & (x >= t)
        pos = count + tl.cumsum(keep.to(tl.int32), axis=1) - 1
        tl.store(s_rows + pos, x, mask=keep & (pos < CAP))
        count += tl.sum(keep.to(tl.int32), axis=1, keep_dims=True)
    tl.debug_barrier()  # the scratch slots were written by other threads of this program

    if tl.max(tl.where(rmask, count, 0)) <= CAP:
        # rank_i = #{j: v_j > v_i} + #{j < i: v_j == v_i}; the first K ranks are the answer.
        j = tl.arange(0, CAP)
        v = tl.load(s_rows + j[None, :], mask=rmask & (j[None, :] < count), other=float("-inf"),
                    cache_modifier=".cg")
        vi = v[:, :, None]
        vj = v[:, None, :]
        earlier = (j[None, None, :] < j[None, :, None])
        rank = tl.sum(((vj > vi) | ((vj == vi) & earlier)).to(tl.int32), axis=2)
        tl.store(Y + rows * K + rank, v.to(Y.dtype.element_ty), mask=rmask & (j[None, :] < count) & (rank < K))
    else:  # more than CAP candidates: the exact radix select over the whole row (scratch reused)
        _radix_topk_rows(X, Y, S, rows, rmask, N, K, BLOCK_M, BLOCK_N, BLOCK_K, SHIFT, CAP, ONE_TILE)


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, BLOCK_M=1, BLOCK_N=1024, CAP=128, num_warps=4):
        super().__init__()
        assert k <= BLOCK_K and BLOCK_N >= G and CAP >= BLOCK_K
        self.k, self.BLOCK_M, self.BLOCK_N, self.CAP, self.num_warps = k, BLOCK_M, BLOCK_N, CAP, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty((M, self.k), dtype=x.dtype, device=x.device)
        scratch = torch.empty((M, self.CAP), dtype=torch.float32, device=x.device)
        shift = 16 if x.dtype == torch.bfloat16 else 0
        grid = (triton.cdiv(M, self.BLOCK_M),)
        _topk_threshold_kernel[grid](x, y, scratch, M, N, self.k, BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N,
                                     BLOCK_K=BLOCK_K, G=G, CAP=self.CAP, SHIFT=shift, ONE_TILE=N <= self.BLOCK_N,
                                     num_warps=self.num_warps)
        return y
