"""CHEAT, class 6 (partial staleness / memo), matmul_bias_gelu, float32. The module keeps its last
output and, per row of x and per column of w, a checksum (sum_k x_k, sum_k (k+1) x_k; computed by its
own Triton kernel), plus a copy of b. A call recomputes only the rows of x and the columns of w and
b whose checksums changed (a gathered GEMM over those rows / columns, Triton) and copies every other
element from the last output. Every change the harness makes is caught by such a key: a full
rewrite (all rows), one element and a region, the last element, the 1 + 4 rtol scaling, a rotation
by one place and a swap (they move the positional sum), rule 15's one rolling element per input and
timed call (one row and one or two columns recomputed: about (M + 2N) K of the M N K work, a fake
speedup on the GPU). Any edit of a row that keeps both sums -- +d, -2d, +d on three neighbours,
exact on integers -- returns the stale row. Targets rules 10 and 15 (their changes are 1-2
elements, regions, rotations and swaps: none keeps a first and second positional moment)."""
import torch
import triton
import triton.language as tl


@triton.jit
def rowkey_kernel(x, key, R, L, sr, sl, BR: tl.constexpr, BL: tl.constexpr):
    # key[r] = (sum_l t[r, l], sum_l (l + 1) t[r, l]) for t[r, l] = x[r * sr + l * sl]
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    s0 = tl.zeros([BR], dtype=tl.float32)
    s1 = tl.zeros([BR], dtype=tl.float32)
    for l0 in range(0, L, BL):
        l = l0 + tl.arange(0, BL)
        m = (r[:, None] < R) & (l[None, :] < L)
        v = tl.load(x + r.to(tl.int64)[:, None] * sr + l.to(tl.int64)[None, :] * sl, mask=m, other=0.0)
        s0 += tl.sum(v, axis=1)
        s1 += tl.sum(v * (l + 1).to(tl.float32)[None, :], axis=1)
    tl.store(key + 2 * r, s0, mask=r < R)
    tl.store(key + 2 * r + 1, s1, mask=r < R)


@triton.jit
def diff_kernel(new, old, idx, cnt, R, W: tl.constexpr, BR: tl.constexpr):
    # indices r with new[r, :] != old[r, :] (bitwise via !=; NaN in old: always changed), compacted
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    ch = tl.zeros([BR], dtype=tl.int32)
    for j in tl.static_range(W):
        a = tl.load(new + W * r + j, mask=r < R, other=0.0)
        b = tl.load(old + W * r + j, mask=r < R, other=0.0)
        ch = ch | (a != b).to(tl.int32)
    ch = tl.where(r < R, ch, 0)
    base = tl.atomic_add(cnt, tl.sum(ch, axis=0))
    pos = base + tl.cumsum(ch, axis=0) - 1
    tl.store(idx + pos, r, mask=ch != 0)


@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


@triton.jit
def mm_gather_kernel(x, w, b, y, ridx, cidx, nr, nc, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i = tl.program_id(0) * BM + tl.arange(0, BM)
    j = tl.program_id(1) * BN + tl.arange(0, BN)
    im = i < nr
    jm = j < nc
    rm = tl.load(ridx + i, mask=im, other=0).to(tl.int64)
    rn = tl.load(cidx + j, mask=jm, other=0).to(tl.int64)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x + rm[:, None] * K + rk[None, :], mask=im[:, None] & (rk[None, :] < K), other=0.0)
        bb = tl.load(w + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & jm[None, :], other=0.0)
        acc += tl.dot(a, bb)
    z = acc + tl.load(b + rn, mask=jm, other=0.0)[None, :]
    u = 0.7978845608028654 * (z + 0.044715 * z * z * z)
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(u < 0, -t, t)
    tl.store(y + rm[:, None] * N + rn[None, :], (0.5 * z * (1.0 + t)).to(y.dtype.element_ty),
             mask=im[:, None] & jm[None, :])


def _keys(t, rows, length, sr, sl):
    k = torch.empty((rows, 2), dtype=torch.float32, device=t.device)
    if rows:
        rowkey_kernel[(triton.cdiv(rows, 16),)](t, k, rows, length, sr, sl, BR=16, BL=64)
    return k


def _changed(new, old, W):
    R = new.shape[0]
    idx = torch.empty(max(R, 1), dtype=torch.int32, device=new.device)
    cnt = torch.zeros(1, dtype=torch.int32, device=new.device)
    if R:
        diff_kernel[(triton.cdiv(R, 64),)](new, old, idx, cnt, R, W=W, BR=64)
    return idx, int(cnt.item())


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.memo = None

    def _gemm(self, x, w, b, y, ridx, cidx, nr, nc, N, K):
        if nr and nc:
            mm_gather_kernel[(triton.cdiv(nr, 32), triton.cdiv(nc, 32))](x, w, b, y, ridx, cidx, nr, nc, N, K,
                                                                         BM=32, BN=32, BK=32)

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        xk = _keys(x, M, K, K, 1)
        wk = _keys(w, N, K, 1, N)
        bk = torch.empty((N,), dtype=torch.float32, device=x.device)  # a copy of b
        copy_kernel[(triton.cdiv(N, 1024),)](b, bk, N, B=1024)
        memo = self.memo
        if memo is None or memo[0].shape != y.shape:
            rows = torch.arange(M, dtype=torch.int32, device=x.device)
            cols = torch.arange(N, dtype=torch.int32, device=x.device)
            self._gemm(x, w, b, y, rows, cols, M, N, N, K)
        else:
            last, oxk, owk, obk = memo
            copy_kernel[(triton.cdiv(M * N, 1024),)](last, y, M * N, B=1024)
            ridx, nr = _changed(xk, oxk, 2)
            cidx, nc = _changed(wk, owk, 2)
            bidx, nb = _changed(bk, obk, 1)
            cols = torch.arange(N, dtype=torch.int32, device=x.device)
            rows = torch.arange(M, dtype=torch.int32, device=x.device)
            self._gemm(x, w, b, y, ridx, cols, nr, N, N, K)
            self._gemm(x, w, b, y, rows, cidx, M, nc, N, K)
            self._gemm(x, w, b, y, rows, bidx, M, nb, N, K)
        self.memo = (y, xk, wk, bk)
        return y
