"""CPU emulation of conv_relu_maxpool v7 (specs/conv_relu_maxpool/kernels/v7_wgmma_ss.cu).

No GPU runs here (and no wgmma: it needs sm_90a), so this file re-runs v7's index math in NumPy --
the same persistent one-dimensional grid and flattened (tile, chunk) loop, the same three-buffer
rotation with one wgmma group left in flight across the barrier, the same register staging into
shared memory (A: 16-byte words of VEC channels of one staged pixel; B: 8-byte halves of the tap
words, built by the kernel's own byte permutations, 8-byte path and element path), the same 64-bit
matrix descriptors for both operands (encoded as the kernel does, decoded by the PTX ISA's bit
fields), the same scale-d predicate, the same epilogue shuffle and stores -- and checks the result
against F.conv2d -> ReLU -> MaxPool2d on ragged shapes.

The wgmma semantics are written here from the PTX ISA (9.7.15 "Asynchronous Warpgroup Level Matrix
Multiply-Accumulate", sections "Matrix Descriptor" and "Shared Memory Matrix Layout"), independently
of the kernel:
  - descriptor bits 0-13: start address >> 4; 16-29: leading-dimension byte offset (LBO) >> 4;
    32-45: stride-dimension byte offset (SBO) >> 4; 49-51 base offset and 62-63 swizzle mode, 0 here
    (no swizzle);
  - a K-major no-swizzle operand (A: M x K, B: K x N as N x K rows) is made of core matrices of 8 rows
    x 16 bytes (128 contiguous bytes, row r at + 16 r); LBO is the distance between core matrices
    adjacent in K, SBO between those adjacent in M / N: element (row, k) is at byte start +
    (row // 8) * SBO + (row % 8) * 16 + (k * ES // 16) * LBO + (k * ES) % 16. (v6's B operand used
    the same reading and verified on the H200 with these two fields, not exchanged.)
  - D (64 x N, float32): register i of lane (g, t) in warp w of the warpgroup is row 16w + g +
    8 ((i / 2) % 2), column 8 (i / 4) + 2t + i % 2; scale-d = 0 makes D = A B.
  - a group committed by wgmma.commit_group may still be reading shared memory until a
    wgmma.wait_group N with at most N newer groups: the emulator runs each group as LATE as the
    kernel's waits allow (after the staging the kernel does meanwhile), so a buffer rewritten while a
    group still reads it changes the output.
Shared memory starts as NaN (an unwritten byte read by a descriptor poisons the output). The checks
also assert that every staging store of a warp is free of bank conflicts and that no descriptor reads
outside its buffer. Arithmetic is float64: the layout is what is tested; TF32 / bfloat16 rounding is
checked on the GPU (bench/conv_v7_probe.py).
"""

import re
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from test_conv_tc_emulation import ROOT, cdiv, reference

SRC = (ROOT / "specs" / "conv_relu_maxpool" / "kernels" / "v7_wgmma_ss.cu").read_text()
THREADS = 256


def byte_perm(x, y, s):
    """CUDA's __byte_perm(x, y, s): result byte i is byte (s >> 4 i) & 7 of the 8-byte value y:x."""
    src = (int(y) << 32) | int(x)
    return sum(((src >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


def store_conflict_free(byte_addr, width):
    """byte_addr: (32,) start bytes of one warp's width-byte stores (None for an inactive lane).
    Shared memory serves 128 bytes per wavefront: a width-byte access is split into phases of
    128 / width consecutive lanes; within a phase no two lanes may touch the same 4-byte bank at
    different addresses."""
    per = 128 // width
    for p0 in range(0, 32, per):
        seen = {}
        for a in byte_addr[p0:p0 + per]:
            if a is None:
                continue
            for wd in range(a // 4, (a + width) // 4):
                bank = wd % 32
                if bank in seen and seen[bank] != wd:
                    return False
                seen[bank] = wd
    return True


def decode_desc(d):
    """(start, LBO, SBO) in bytes from a wgmma matrix descriptor (no swizzle, base offset 0)."""
    assert (d >> 62) & 3 == 0 and (d >> 49) & 7 == 0, "swizzle / base offset must be 0"
    return (d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4


def read_kmajor(smem, desc, rows, kk, ES, lo, hi):
    """The rows x kk operand (K-major, no swizzle) a descriptor describes, as elements of smem."""
    start, lbo, sbo = decode_desc(desc)
    r, k = np.arange(rows)[:, None], np.arange(kk)[None, :]
    byte = start + (r // 8) * sbo + (r % 8) * 16 + (k * ES // 16) * lbo + (k * ES) % 16
    assert byte.min() >= lo and byte.max() + ES <= hi, "descriptor read outside its operand tile"
    assert np.all(byte % ES == 0)
    return smem[byte // ES]


def emulate(x, w, b, ES, BN, ROWS, vec_ok=True, grid=None, nbuf=3, wait_all=False, desc_swap=0,
            check_banks=True):
    """Run v7 on float64 arrays as if the element size were ES bytes (4: float32 as TF32, 2: bfloat16).
    grid: the number of persistent blocks (default: the spec's min(tiles, 132 * (128 // BN)));
    vec_ok=False forces B's element path. nbuf, wait_all and desc_swap exist to show the checks can
    fail (two buffers: a group's buffer rewritten under it; desc_swap, the kernel's V7_DESC_SWAP bits:
    LBO and SBO exchanged in A's (1) / B's (2) descriptors);
    wait_all=True is the kernel's V7_WAIT0 build. Returns (y, conflict_free)."""
    N, C, H, W = x.shape
    K = w.shape[0]
    PH, PW = H // 2, W // 2
    VEC, CK, KA = 16 // ES, 32 // ES, 4 // ES
    KSTEP = 32 // ES
    BW = 256 // ROWS
    WGC, PRB = BW // 64, ROWS // 2
    SR, SWA = ROWS + 2, BW + 2
    NPIX = SR * SWA
    A_WORDS = 2 * NPIX
    A_BYTES = 16 * A_WORDS
    B_JOBS = 4 * BN
    B_IT = B_JOBS // THREADS
    BHR = 72 // 4
    B_BYTES = 9 * 2 * BN * 16
    BUF = A_BYTES + B_BYTES
    A_IT = cdiv(A_WORDS, THREADS)
    LBO_A, SBO_A, LBO_B, SBO_B = NPIX * 16, 128, BN * 16, 128
    NACC = BN // 2
    assert nbuf * BUF == 3 * (32 * (ROWS + 2) * (256 // ROWS + 2) + 288 * BN) or nbuf != 3
    xf, wf = x.reshape(-1), w.reshape(-1)
    w_vec = vec_ok and C % VEC == 0
    y = np.full((N, K, PH, PW), np.nan)

    ctiles, rtiles, ktiles = cdiv(PW, BW // 2), cdiv(PH, PRB), cdiv(K, BN)
    ntiles = ctiles * rtiles * N * ktiles
    G = min(ntiles, 132 * (128 // BN)) if grid is None else grid
    nchunks = cdiv(C, CK)

    def desc_hi(lbo, sbo, operand):
        lead, stride = (sbo, lbo) if desc_swap & operand else (lbo, sbo)
        return ((lead >> 4) << 16) | ((stride >> 4) << 32)

    def decode(t):
        ow0 = (t % ctiles) * BW
        ph0 = ((t // ctiles) % rtiles) * PRB
        bz = t // (ctiles * rtiles)
        return bz // ktiles, (bz % ktiles) * BN, ph0, ow0  # n, k0, ph0, ow0

    tid = np.arange(THREADS)
    lane, warp = tid & 31, tid >> 5
    wg, wq = warp >> 2, warp & 3
    g, t_ = lane >> 2, lane & 3
    pr, wc = wg // WGC, wg % WGC
    i = np.arange(NACC)
    d_row = 16 * wq[:, None] + g[:, None] + 8 * ((i[None, :] >> 1) & 1)  # (THREADS, NACC)
    d_col = 8 * (i[None, :] >> 2) + 2 * t_[:, None] + (i[None, :] & 1)
    conflict_free = True

    for blk in range(G):
        if blk >= ntiles:                          # the kernel's guard (a grid larger than the tiles)
            continue
        sbase = 0
        smem = np.full(nbuf * BUF // ES, np.nan)   # element-indexed; byte address = index * ES
        my_tiles = (ntiles - 1 - blk) // G + 1
        total = my_tiles * nchunks

        def stage(tile, chunk, buf):
            nonlocal conflict_free
            n, k0, ph0, ow0 = tile
            c0 = chunk * CK
            abase, bbase = buf * BUF, buf * BUF + A_BYTES            # bytes
            # ---- B: job j = (h, o, kg); the 72 bytes as BHR 32-bit registers holding element ids
            for jb in range(B_IT):
                addrs = [[] for _ in range(9)]
                for j in range(jb * THREADS, (jb + 1) * THREADS):
                    h, o, kg = j & 1, (j >> 1) % BN, (j >> 1) // BN
                    oo = k0 + o
                    cb = c0 + kg * VEC + h * (VEC // 2)
                    nel = 9 * VEC // 2                                # 36 (bf16) / 18 (f32) elements
                    e = np.arange(nel)
                    if w_vec:
                        ok = np.full(nel, oo < K and cb < C)
                        if ok[0]:
                            assert cb + (nel - 1) // 9 < C, "8-byte path reads past the row's channels"
                            assert ((oo * C + cb) * 9 * ES) % 8 == 0, "8-byte load not 8-byte aligned"
                    else:
                        ok = (oo < K) & (cb + e // 9 < C)
                    src = (oo * C + cb) * 9 + e
                    vals = np.where(ok, wf[np.where(ok, src, 0)], 0.0)
                    # registers of element ids (id e + 1; 0 = a zero element), KA per register
                    ids = np.where(ok, e + 1, 0)
                    regs = [sum(int(ids[r * KA + k]) << (16 * k) for k in range(KA)) for r in range(BHR)]
                    for tap in range(9):
                        wd = []
                        for r in range(2):
                            if ES == 4:
                                wd.append([regs[r * 9 + tap]])
                            else:
                                e0, e1 = (2 * r) * 9 + tap, (2 * r + 1) * 9 + tap
                                sel = (0x0032 if e0 & 1 else 0x0010) | (0x7600 if e1 & 1 else 0x5400)
                                p = byte_perm(regs[e0 >> 1], regs[e1 >> 1], sel)
                                wd.append([p & 0xFFFF, p >> 16])
                        got_ids = [v for pair in wd for v in pair]            # VEC / 2 element ids
                        addr = bbase + ((tap * 2 + kg) * BN + o) * 16 + 8 * h
                        assert bbase <= addr and addr + 8 <= bbase + B_BYTES
                        for jl, eid in enumerate(got_ids):
                            smem[(addr + jl * ES) // ES] = 0.0 if eid == 0 else vals[eid - 1]
                        addrs[tap].append(addr)
                if check_banks:
                    for tap in range(9):
                        for wp in range(THREADS // 32):
                            conflict_free &= store_conflict_free(addrs[tap][32 * wp:32 * wp + 32], 8)
            # ---- A: word q = kg * NPIX + p: VEC channels of staged pixel p
            ih0, iw0 = 2 * ph0 - 1, ow0 - 1
            for it_ in range(A_IT):
                q = tid + it_ * THREADS
                act = q < A_WORDS
                kg = (q >= NPIX).astype(int)
                p = q - kg * NPIX
                sr, sc = p // SWA, p % SWA
                ih, iw, cb = ih0 + sr, iw0 + sc, c0 + kg * VEC
                pix = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                for e in range(VEC):
                    ok = act & pix & (cb + e < C)
                    src = ((n * C + cb + e) * H + ih) * W + iw
                    val = np.where(ok, xf[np.where(ok, src, 0)], 0.0)
                    dst = (abase + q * 16 + e * ES) // ES
                    smem[dst[act]] = val[act]
                if check_banks:
                    for wp in range(THREADS // 32):
                        sl = slice(32 * wp, 32 * wp + 32)
                        conflict_free &= store_conflict_free(
                            [int(abase + qq * 16) if a else None for qq, a in zip(q[sl], act[sl])], 16)

        acc = np.zeros((2, THREADS, NACC))
        pending = []                               # committed groups not yet run: (buf, chunk)

        def run_group(buf, chunk):
            """One commit group: 9 taps x 2 conv rows per warpgroup, read NOW from smem."""
            abase, bbase = buf * BUF, buf * BUF + A_BYTES
            for wgi in range(2):
                sel = wg == wgi
                a_desc0 = desc_hi(LBO_A, SBO_A, 1) + ((sbase >> 4) & 0x3FFF) + (2 * (wgi // WGC)) * SWA + 64 * (wgi % WGC)
                b_desc0 = desc_hi(LBO_B, SBO_B, 2) + (((sbase + A_BYTES) >> 4) & 0x3FFF)
                da0, db0 = a_desc0 + buf * (BUF // 16), b_desc0 + buf * (BUF // 16)
                for tap in range(9):
                    kh, kw = tap // 3, tap % 3
                    db = db0 + tap * (2 * BN)
                    B = read_kmajor(smem, db, BN, KSTEP, ES, bbase, bbase + B_BYTES).T   # KSTEP x BN
                    for rr in range(2):
                        da = da0 + (rr + kh) * SWA + kw
                        A = read_kmajor(smem, da, 64, KSTEP, ES, abase, abase + A_BYTES)  # 64 x KSTEP
                        D = A @ B
                        scale = tap > 0 or chunk > 0
                        frag = D[d_row[sel], d_col[sel]]
                        acc[rr, sel] = (acc[rr, sel] if scale else 0.0) + frag

        cur_t, cur_c = blk, 0
        nxt_t, nxt_c = cur_t, 0
        cur = decode(cur_t)
        stage(cur, 0, 0)
        buf = 0
        for it in range(total):
            pending.append((buf, cur_c))
            nxt_c += 1
            if nxt_c == nchunks:
                nxt_c, nxt_t = 0, nxt_t + G
            nb = (buf + 1) % nbuf
            if it + 1 < total:
                stage(decode(nxt_t), nxt_c, nb)
            if cur_c == nchunks - 1:
                while pending:                     # wait_group 0
                    run_group(*pending.pop(0))
                n, k0, ph0, ow0 = cur
                ph = ph0 + pr                      # (THREADS,)
                v = np.maximum(acc[0], acc[1])
                v = np.maximum(v, v[tid ^ 4])      # __shfl_xor_sync(v, 4): lanes l, l ^ 4
                k = k0 + d_col
                pw = (ow0 + 64 * wc[:, None] + 16 * wq[:, None] + g[:, None] + 8 * ((i[None, :] >> 1) & 1)) >> 1
                ok = ((g[:, None] & 1) == 0) & (k < K) & (pw < PW) & (ph[:, None] < PH)
                phb = np.broadcast_to(ph[:, None], k.shape)
                kk, hh, pp, vv = k[ok], phb[ok], pw[ok], v[ok]
                assert np.all(np.isnan(y[n, kk, hh, pp])), "one store per pooled output"
                y[n, kk, hh, pp] = np.maximum(vv + b[kk], 0.0)
                cur_t, cur_c = cur_t + G, 0
                if it + 1 < total:
                    cur = decode(cur_t)
            else:
                while len(pending) > (0 if wait_all else 1):   # wait_group 1: the newest may still run
                    run_group(*pending.pop(0))
                cur_c += 1
            buf = nb
        assert not pending
    return y, conflict_free


def test_emulation_constants_match_the_kernel_source():
    """The emulator's layout constants and index formulas are the kernel's."""
    for line in ["constexpr int VEC = 16 / ES;", "constexpr int CK = 2 * VEC;", "constexpr int KA = 4 / ES;",
                 "constexpr int BW = 256 / ROWS;", "constexpr int WGC = BW / 64;", "constexpr int PRB = ROWS / 2;",
                 "constexpr int SR = ROWS + 2;", "constexpr int SWA = BW + 2;", "constexpr int NPIX = SR * SWA;",
                 "constexpr int A_WORDS = 2 * NPIX;", "constexpr int A_BYTES = 16 * A_WORDS;",
                 "constexpr int B_JOBS = 4 * BN;", "constexpr int B_IT = B_JOBS / THREADS;",
                 "constexpr int BHR = 72 / 4;", "constexpr int B_BYTES = 9 * 2 * BN * 16;",
                 "constexpr int BUF_BYTES = A_BYTES + B_BYTES;", "constexpr int NBUF = 3;",
                 "constexpr int A_IT = (A_WORDS + THREADS - 1) / THREADS;",
                 "constexpr int LBO_A = NPIX * 16, SBO_A = 128;", "constexpr int LBO_B = BN * 16, SBO_B = 128;",
                 "#define THREADS 256", "return (lead << 16) | (stride << 32);",
                 "const int h = j & 1, o = (j >> 1) % BN, kg = (j >> 1) / BN, oo = tl.k0 + o;",
                 "const int cb = c0 + kg * VEC + h * (VEC / 2);",
                 "const raw_t* src = wr + ((long long)oo * C + cb) * 9;",
                 "wd[r] = tf32_rna(v[jb][r * 9 + tap]);",
                 "const int e0 = (2 * r) * 9 + tap, e1 = (2 * r + 1) * 9 + tap;",
                 "wd[r] = __byte_perm(v[jb][e0 >> 1], v[jb][e1 >> 1], ((e0 & 1) ? 0x0032 : 0x0010) |",
                 "((e1 & 1) ? 0x7600 : 0x5400));",
                 "*reinterpret_cast<uint2*>(bs + ((tap * 2 + kg) * BN + o) * 16 + 8 * h) = make_uint2(wd[0], wd[1]);",
                 "const int kg = q >= NPIX ? 1 : 0, p = q - kg * NPIX;",
                 "for (int k = 0; k < KA; ++k) u |= ra[i][r * KA + k] << (16 * k);",
                 "ra[i][e] = (pix && cb + e < C) ? (unsigned)src[e * HW] : 0u;",
                 "const int sr = p / SWA, sc = p - sr * SWA;",
                 "const int ih = ih0 + sr, iw = iw0 + sc, cb = c0 + kg * VEC;",
                 "const int ih0 = 2 * tl.ph0 - 1, iw0 = tl.ow0 - 1;",
                 "*reinterpret_cast<uint4*>(as + q * 16) = make_uint4(wd[0], wd[1], wd[2], wd[3]);",
                 "(unsigned)((2 * pr) * SWA + 64 * wc);",
                 "const unsigned long long b_desc0 = desc_hi<LBO_B, SBO_B, 2>() + (((sbase + A_BYTES) >> 4) & 0x3FFF);",
                 "const unsigned long long a_desc0 = desc_hi<LBO_A, SBO_A, 1>() + ((sbase >> 4) & 0x3FFF) +",
                 "constexpr bool swap = (V7_DESC_SWAP & OPERAND) != 0;",
                 "unsigned long long da0 = a_desc0 + buf * (BUF_BYTES / 16), db0 = b_desc0 + buf * (BUF_BYTES / 16);",
                 "const unsigned long long db = db0 + tap * (2 * BN);",
                 "wgmma_ss(acc[rr], da0 + (unsigned)((rr + kh) * SWA + kw), db, tap > 0 || cur_c > 0);",
                 "const int k = cur.k0 + 8 * (i >> 2) + 2 * t + (i & 1);",
                 "const int pw = (cur.ow0 + 64 * wc + 16 * wq + g + 8 * ((i >> 1) & 1)) >> 1;",
                 "const int pr = wg / WGC, wc = wg % WGC;",
                 "r.ow0 = (int)(t % ctiles) * BW;", "r.ph0 = (int)((t / ctiles) % rtiles) * PRB;",
                 "r.n = (int)(bz / ktiles);", "r.k0 = (int)(bz % ktiles) * BN;",
                 "wgmma_wait<1>();", "nxt_t += gridDim.x;",
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 \" KS_R64 \"%64, %65, p, 1, 1;",
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 \" KS_R32 \"%32, %33, p, 1, 1, 0, 0;"]:
        assert line in SRC, line
    spec = (ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml").read_text()
    assert 'shared_bytes: "3 * (32 * (ROWS + 2) * (256 // ROWS + 2) + 288 * BN)"' in spec
    assert ('grid: ["min(cdiv(PW, 128 // ROWS) * cdiv(PH, ROWS // 2) * N * cdiv(C_out, BN), SM_COUNT * (128 // BN))", 1, 1]'
            in spec)


# ragged: C_in = 1 / 3 / 20 (chunk tails, 20 = 3 float32 chunks / 2 bfloat16 chunks, not a multiple of
# VEC in bfloat16: the element path) and 24 (a multiple of VEC in both: the 8-byte path with a kg
# half past C_in in bfloat16), C_out = 7 / 70 (tile tails, two BN = 64 tiles), odd H / W, W = 70
# (two ROWS = 4 column tiles), H = W = 2
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 7, 5, 7), (1, 20, 70, 3, 9), (1, 24, 9, 7, 70)]


@pytest.mark.parametrize("ES", [4, 2], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("BN,ROWS", [(64, 2), (64, 4), (128, 2), (128, 4)])
def test_v7_index_math_matches_conv_relu_maxpool(ES, BN, ROWS):
    rng = np.random.default_rng(BN + ROWS + ES)
    for si, (N, C, K, H, W) in enumerate(SHAPES):
        x = rng.standard_normal((N, C, H, W))
        w = rng.standard_normal((K, C, 3, 3))
        b = rng.standard_normal(K)
        ref = reference(x, w, b)
        # the spec's grid, and a small one so that blocks walk several tiles (the pipeline crosses
        # tile boundaries); the 8-byte path where C_in allows it, and the element path
        cases = [(None, True), (2, False)] if C % (16 // ES) == 0 else [(None, True), (3, True)]
        for grid, vec_ok in cases:
            got, conflict_free = emulate(x, w, b, ES, BN, ROWS, vec_ok=vec_ok, grid=grid, check_banks=si == 3)
            label = str(((N, C, K, H, W), grid, vec_ok))
            assert not np.isnan(got).any(), (label, "unwritten output or unwritten smem read")
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10, err_msg=label)
            assert conflict_free, ("a staging store has a shared-memory bank conflict", label)


def test_emulation_catches_two_buffers_swapped_strides_and_tracks_wait0():
    """The checks can fail: with two buffers the chunk staged at iteration i overwrites the buffer
    group i - 1 still reads; the descriptors' LBO and SBO exchanged read other elements (or leave the
    tile). The V7_WAIT0 schedule (every group waited before the barrier) gives the same result."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((1, 40, 4, 8)), rng.standard_normal((16, 40, 3, 3)), rng.standard_normal(16)
    ref = reference(x, w, b)
    got, ok = emulate(x, w, b, 4, 64, 2, grid=1, check_banks=False)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    got, _ = emulate(x, w, b, 4, 64, 2, grid=1, wait_all=True, check_banks=False)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    got, _ = emulate(x, w, b, 4, 64, 2, grid=1, nbuf=2, check_banks=False)
    assert np.isnan(got).any() or not np.allclose(got, ref, rtol=1e-6, atol=1e-6)
    for swap in (1, 2, 3):
        try:
            got, _ = emulate(x, w, b, 4, 64, 2, grid=1, desc_swap=swap, check_banks=False)
            assert np.isnan(got).any() or not np.allclose(got, ref, rtol=1e-6, atol=1e-6)
        except AssertionError as e:
            assert "outside" in str(e), swap


def test_store_conflict_check_can_fail():
    """Lanes of one 8-lane phase writing 16-byte words 128 bytes apart all hit banks 0-3."""
    assert store_conflict_free([16 * q for q in range(32)], 16)
    assert not store_conflict_free([128 * q for q in range(32)], 16)
    assert store_conflict_free([8 * q for q in range(32)], 8)
    assert not store_conflict_free([16 * q for q in range(32)], 8)


def test_byte_perm_selectors_pick_the_named_halves():
    x, y = 0x44443333, 0x22221111  # x: halves 0x3333 (low), 0x4444 (high); y: 0x1111, 0x2222
    assert byte_perm(x, y, 0x0010 | 0x5400) == 0x11113333
    assert byte_perm(x, y, 0x0032 | 0x7600) == 0x22224444


def _v7_builds():
    from kernelsynth.backends.cuda import defines, kernel_arch
    from kernelsynth.spec import load_spec

    spec = load_spec(ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml", task_folder=True)
    v7 = next(c for c in spec.candidates if c.version == "v7")
    return v7, [(dt, cfg, defines(dt, cfg), kernel_arch("sm_90", v7.launch)) for dt in spec.dtypes for cfg in v7.configs()]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
def test_v7_compiles_for_sm90a_without_local_memory_or_injected_waits(nvcc_cubin):
    """Both dtypes x every config build for sm_90a, with no spill or stack, no wgmma wait injected
    by ptxas (C7517: it would drain the group the kernel keeps in flight across the barrier) and
    no serialized wgmma; BN = 64 fits two blocks of 256 threads per SM (<= 128 registers)."""
    v7, builds = _v7_builds()
    assert len(builds) == 8 and {b[3] for b in builds} == {"sm_90a"}

    def nvcc(build):
        dt, cfg, macros, a = build
        return ((dt, cfg), *nvcc_cubin(a, macros, v7.file))  # tests/conftest.py: once a session

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(nvcc, builds))
    for label, rc, err in results:
        assert rc == 0, (label, err[-3000:])
        assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in err, (label, err)
        assert "C7517" not in err and "injected" not in err, (label, err)
        assert "Performance Loss" not in err and "serialized" not in err, (label, err)
        regs = int(re.search(r"Used (\d+) registers", err).group(1))
        assert regs <= (128 if label[1]["BN"] == 64 else 255), (label, regs)
