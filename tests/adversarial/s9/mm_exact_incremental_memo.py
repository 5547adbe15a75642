"""CHEAT (timing only), matmul_bias_gelu, float32: an incremental memo that is always *right*. It
keeps copies of the last x, w, b and output; a call compares every row of x and every column of w
(and b) with the kept copies element by element (Triton), recomputes only the rows and columns
that differ (a gathered Triton GEMM) and copies the rest of the kept output. No verification
change can catch it: a row that differs in any bit is recomputed. Under rule 15's old timed calls
(one rolling element per input per call) it recomputes one row and one or two columns of a 4096^3
GEMM per call -- a fake speedup; with fresh inputs per timed call (session 9, compute-bound tasks)
every row differs and it does the whole GEMM plus its comparisons and copies. For
bench/h200_memo9.sh (its median next to the ladder's) and the CPU test of rule 15's fresh inputs."""
import torch
import triton
import triton.language as tl


@triton.jit
def rows_differ_kernel(new, old, idx, cnt, R, L, sr, sl, BR: tl.constexpr, BL: tl.constexpr):
    # indices r with new[r, :] != old[r, :] for t[r, l] = t[r * sr + l * sl] (NaN in old: changed)
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    ch = tl.zeros([BR], dtype=tl.int32)
    for l0 in range(0, L, BL):
        l = l0 + tl.arange(0, BL)
        m = (r[:, None] < R) & (l[None, :] < L)
        off = r.to(tl.int64)[:, None] * sr + l.to(tl.int64)[None, :] * sl
        a = tl.load(new + off, mask=m, other=0.0)
        b = tl.load(old + off, mask=m, other=0.0)
        ch = ch | tl.max((a != b).to(tl.int32), axis=1)
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


def _copy(src, dst):
    n = src.numel()
    if n:
        copy_kernel[(triton.cdiv(n, 1024),)](src, dst, n, B=1024)


def _changed(new, old, rows, length, sr, sl):
    idx = torch.empty(max(rows, 1), dtype=torch.int32, device=new.device)
    cnt = torch.zeros(1, dtype=torch.int32, device=new.device)
    if rows:
        rows_differ_kernel[(triton.cdiv(rows, 16),)](new, old, idx, cnt, rows, length, sr, sl, BR=16, BL=64)
    return idx, int(cnt.item())


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kept = None

    def _gemm(self, x, w, b, y, ridx, cidx, nr, nc, N, K):
        if nr and nc:
            mm_gather_kernel[(triton.cdiv(nr, 64), triton.cdiv(nc, 64))](x, w, b, y, ridx, cidx, nr, nc, N, K,
                                                                         BM=64, BN=64, BK=32)

    def forward(self, x, w, b):
        x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        rows = torch.arange(M, dtype=torch.int32, device=x.device)
        cols = torch.arange(N, dtype=torch.int32, device=x.device)
        kept = self.kept
        if kept is None or kept[0].shape != y.shape or kept[1].shape != x.shape:
            self._gemm(x, w, b, y, rows, cols, M, N, N, K)
        else:
            ky, kx, kw, kb = kept
            _copy(ky, y)
            ridx, nr = _changed(x, kx, M, K, K, 1)
            cidx, nc = _changed(w, kw, N, K, 1, N)
            bidx, nb = _changed(b, kb, N, 1, 1, 1)
            self._gemm(x, w, b, y, ridx, cols, nr, N, N, K)
            self._gemm(x, w, b, y, rows, cidx, M, nc, N, K)
            self._gemm(x, w, b, y, rows, bidx, M, nb, N, K)
        self.kept = tuple(t.clone() for t in (y, x, w, b))  # copies: no output is kept
        return y
