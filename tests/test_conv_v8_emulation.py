"""CPU emulation of conv_relu_maxpool v8 (specs/conv_relu_maxpool/kernels/v8_wgmma_async.cu).

No GPU runs here (and no wgmma, bulk copies or mbarriers: they need sm_90a), so this file re-runs v8's
index math and its synchronization protocol in NumPy and checks the result against
F.conv2d -> ReLU -> MaxPool2d on ragged shapes:
  - the persistent one-dimensional grid and each block's flattened (tile, chunk) stream;
  - the producer warpgroup as four independent warps (each lane's copy / transposition / arrival
    formulas as the kernel's), the two consumer warpgroups as two more agents; a scheduler
    interleaves the six agents (fixed policies and seeded random ones) and blocks an agent at each
    mbarrier wait until the emulated barrier lets it through;
  - mbarriers as the PTX ISA describes them (written here from the ISA, independently of the kernel):
    an expected arrival count, a transaction count raised by arrive.expect_tx and lowered by each
    bulk copy's complete_tx, a phase that completes when both reach zero, try_wait.parity P succeeding
    once the current phase's parity differs from P. A successful wait is also checked to be the use
    the kernel meant (no phase aliasing), and no agent may be blocked forever (no deadlock);
  - bulk copies (cp.async.bulk) land EARLY (at issue) or LATE (only when an agent would otherwise block
    on their barrier); wgmma commit groups run EARLY (at commit) or LATE (at the wait_group that
    retires them), reading the shared memory and the A registers of that moment: a buffer or a
    fragment register rewritten while an operation still reads it changes the output;
  - shared memory starts as NaN (an unwritten byte that reaches a valid output poisons it);
  - the wgmma semantics from the PTX ISA (9.7.15, "Register Fragments" and "Matrix Descriptor"):
    A from registers -- TF32 m64k8: lane (g, t) of warp w holds rows 16w + g (a0, a2) and 16w + g + 8
    (a1, a3) at k = t (a0, a1) and t + 4 (a2, a3); bfloat16 m64k16: register r holds two elements,
    row 16w + g + 8 (r & 1), k = 2t + 8 (r >> 1) and + 1 (low half first); B from a K-major no-swizzle
    descriptor (bits 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4; element (n, k) at start +
    (n // 8) SBO + (n % 8) 16 + (k ES // 16) LBO + (k ES) % 16); D register i of lane (g, t) in warp
    w: row 16w + g + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2t + (i & 1); scale-d = 0: D = A B;
  - bank conflicts of the shared-memory accesses the threads make (32 banks of 4 bytes; 8 / 16-byte
    accesses served per half / quarter warp): the K-major stores and the fragment loads must be
    conflict-free; the transposition's raw-tile loads are counted (a row wrap inside a warp costs one
    extra wavefront at most).
Arithmetic is float64: the layouts and the protocol are tested; TF32 / bfloat16 rounding is checked on
the GPU (bench/conv_v8_probe.py).
"""

import re
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from test_conv_tc_emulation import ROOT, cdiv, reference

SRC = (ROOT / "specs" / "conv_relu_maxpool" / "kernels" / "v8_wgmma_async.cu").read_text()
SRC9 = (ROOT / "specs" / "conv_relu_maxpool" / "kernels" / "v9_wgmma_decoupled.cu").read_text()
NS = 3
BW = 128
XRW = 144
SWA = BW + 4
WRS = 304


def wavefronts(byte_addr, width):
    """Shared-memory wavefronts of one warp instruction: byte_addr (32,) start addresses (None: lane
    inactive) of width-byte accesses. 1 / 2 / 4-byte accesses: one phase of 32 lanes; 8 bytes: two of 16;
    16 bytes: four of 8. A phase takes as many wavefronts as the most distinct 4-byte words one bank
    must serve (the same word is broadcast). Returns (wavefronts, ideal)."""
    per = 32 if width <= 4 else 128 // width
    total = ideal = 0
    for p0 in range(0, 32, per):
        banks = {}
        act = [a for a in byte_addr[p0:p0 + per] if a is not None]
        if not act:
            continue
        ideal += 1
        for a in act:
            for wd in range(a // 4, (a + max(width, 4) - 1) // 4 + 1 if width >= 4 else a // 4 + 1):
                banks.setdefault(wd % 32, set()).add(wd)
        total += max(len(s) for s in banks.values())
    return total, ideal


def decode_desc(d):
    """(start, LBO, SBO) in bytes from a wgmma matrix descriptor (no swizzle, base offset 0)."""
    assert (d >> 62) & 3 == 0 and (d >> 49) & 7 == 0, "swizzle / base offset must be 0"
    return (d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4


class Bar:
    """An mbarrier (PTX ISA): pending arrivals, transaction count, phase."""

    def __init__(self, count):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def arrive(self, n=1, tx=0):
        assert 0 < n <= self.pending, "more arrivals than the barrier expects in this phase"
        self.pending -= n
        self.tx += tx
        self._check()

    def complete_tx(self, nbytes):
        self.tx -= nbytes
        self._check()

    def _check(self):
        if self.pending == 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.count

    def ready(self, parity):  # try_wait.parity: the phase of that parity has completed
        return (self.phase & 1) != parity


class Machine:
    """One block's shared memory, barriers, pending bulk copies and the scheduler's options."""

    def __init__(self, nbytes, ES, copies_late, groups_late):
        self.ES = ES
        self.smem = np.full(nbytes // ES, np.nan)
        self.rawb = [Bar(128) for _ in range(NS)]                   # v8: pixel + weight bytes
        self.xb = [Bar(128) for _ in range(NS)]                     # v9: pixel bytes
        self.wb = [Bar(128) for _ in range(NS)]                     # v9: weight bytes
        self.fullb = [Bar(128) for _ in range(NS)]
        self.emptyb = [Bar(8) for _ in range(NS)]
        self.pending = []                       # bulk copies not landed: (bar, dst element, values)
        self.copies_late, self.groups_late = copies_late, groups_late
        self.stats = {"xr_wave": 0, "xr_ideal": 0}

    def bulk(self, bar, dst_byte, values):
        nbytes = len(values) * self.ES
        assert dst_byte % 16 == 0 and nbytes % 16 == 0 and nbytes > 0, "bulk copy alignment / size"
        self.pending.append((bar, dst_byte // self.ES, values))
        if not self.copies_late:
            self.land(bar)

    def land(self, bar):
        keep = []
        for b, d, v in self.pending:
            if b is bar:
                self.smem[d:d + len(v)] = v
                b.complete_tx(len(v) * self.ES)
            else:
                keep.append((b, d, v))
        self.pending = keep


def emulate(x, w, b, ES, BN, x_vec=True, w_vec=True, grid=None, policy="random", seed=0, copies_late=True,
            groups_late=True, release_early=False, skip_empty=False, skip_raw=False, check_banks=False,
            proto="v8", skip_reuse=False):
    """Run v8 (proto="v8") or v9 (proto="v9": the same kernel with v9's producer protocol) on float64 arrays as if the element size were ES bytes (4: float32 as TF32, 2: bfloat16).
    x_vec / w_vec: the kernel's alignment predicates (W % VEC == 0 and x 16-byte aligned; C % CK == 0
    and w 16-byte aligned) -- False takes the element paths. grid: the persistent blocks (default
    min(tiles, 132)). policy: "producer" (the producer runs whenever it can), "consumer", "random".
    release_early / skip_empty / skip_raw exist to show the checks can fail (a consumer releasing a
    stage before its wgmmas ran; the producer not waiting for a stage's empty barrier / for its bulk
    copies before the transposition; v9's producer copying pixels into a raw tile before every warp has
    transposed its previous chunk: skip_reuse). check_banks: count
    the wavefronts of the threads' shared-memory accesses in the block's first 2 * NS iterations (the
    patterns repeat: every stage starts on a 128-byte boundary).
    Returns (y, stats)."""
    N, C, H, W = x.shape
    K = w.shape[0]
    PH, PW = H // 2, W // 2
    VEC, CK, KA = 16 // ES, 32 // ES, 4 // ES
    KSTEP = 32 // ES
    WGN = BN // 64
    WGR = 2 // WGN
    ROWS = 2 * WGR
    SR = ROWS + 2
    XR_BYTES = CK * SR * XRW * ES
    NPIX = SR * SWA
    XT_BYTES = 32 * NPIX
    WR_BYTES = WRS * BN
    STAGE = XR_BYTES + XT_BYTES + WR_BYTES
    SMEM = NS * STAGE + 128
    assert SMEM == 3 * (8832 * (256 // BN + 2) + 304 * BN) + 128
    RC_OFF = VEC - 2
    WRW = WRS // ES
    NPAIR = NPIX // 2
    LBO_B, SBO_B = NPIX * 16, 128
    if x_vec:
        assert W % VEC == 0
    if w_vec:
        assert C % CK == 0
    xf, wf = x.reshape(-1), w.reshape(-1)
    HW = H * W
    y = np.full((N, K, PH, PW), np.nan)
    ctiles, rtiles, ktiles = cdiv(PW, BW // 2), cdiv(PH, WGR), cdiv(K, BN)
    ntiles = ctiles * rtiles * N * ktiles
    G = min(ntiles, 132) if grid is None else grid
    nchunks = cdiv(C, CK)
    rng = np.random.default_rng(seed)
    stats = {"xr_wave": 0, "xr_ideal": 0, "xt_checked": 0, "frag_checked": 0, "blocks": 0, "iterations": 0}

    def decode(t):
        ow0 = (t % ctiles) * BW
        ph0 = ((t // ctiles) % rtiles) * WGR
        bz = t // (ctiles * rtiles)
        return bz // ktiles, (bz % ktiles) * BN, ph0, ow0     # n, k0, ph0, ow0

    for blk in range(G):
        if blk >= ntiles:
            continue
        stats["blocks"] += 1
        m = Machine(SMEM, ES, copies_late, groups_late)
        smem = m.smem
        my_tiles = (ntiles - 1 - blk) // G + 1
        total = my_tiles * nchunks
        stats["iterations"] += total

        # ------------------------------------------------------------------ producer warp pw
        # The per-chunk work of a producer warp, shared by both protocols (no waits or arrivals here).
        def transpose_body(pw, tile, c_idx, s, j):
            """Chunk c_idx of tile in stage s: raw tile (or global memory) -> the K-major operand."""
            lanes = np.arange(32)
            pl = 32 * pw + lanes                          # producer thread ids 0..127
            n, k0, ph0, ow0 = tile
            xs = s * STAGE
            xt = xs + XR_BYTES
            c0 = c_idx * CK
            ih0, iw0 = 2 * ph0 - 1, ow0 - 2
            for base in range(0, NPAIR, 128):
                pp = base + pl
                act = pp < NPAIR
                sr = pp // (SWA // 2)
                sc = 2 * (pp - sr * (SWA // 2))
                ih, iw = ih0 + sr, iw0 + sc
                rok = (ih >= 0) & (ih < H)
                ok = [rok & (iw >= 0) & (iw < W), rok & (iw + 1 >= 0) & (iw + 1 < W)]
                # vals[p][c]: pixel p of the pair, local channel c (CK channels)
                vals = np.zeros((2, CK, 32))
                if x_vec:
                    src = xs + (sr * XRW + sc + RC_OFF) * ES          # bytes
                    for c in range(CK):
                        addr = src + c * (SR * XRW * ES)
                        assert np.all(addr[act] % (2 * ES) == 0), "pair load misaligned"
                        if check_banks and j <= 2 * NS:
                            wv, ideal = wavefronts([int(a) if f else None for a, f in zip(addr, act)], 2 * ES)
                            stats["xr_wave"] += wv
                            stats["xr_ideal"] += ideal
                        e = np.where(act, addr // ES, 0)
                        assert np.all(addr[act] >= xs) and np.all(addr[act] + 2 * ES <= xs + XR_BYTES)
                        cin = c0 + c < C
                        for p in range(2):
                            vals[p, c] = np.where(ok[p] & cin, smem[e + p], 0.0)
                else:
                    for p in range(2):
                        for c in range(CK):
                            okk = act & ok[p] & (c0 + c < C)
                            src = ((n * C + c0 + c) * H + ih) * W + iw + p
                            vals[p, c] = np.where(okk, xf[np.where(okk, src, 0)], 0.0)
                flip = (pl >> 2) & 1
                vals = np.where(flip[None, None, :] == 1, vals[::-1], vals)   # the kernel's swap
                for kg in range(2):
                    for q in range(2):
                        dst = xt + (kg * NPIX + 2 * pp + (q ^ flip)) * 16
                        if check_banks and j <= 2 * NS:
                            wv, ideal = wavefronts([int(a) if f else None for a, f in zip(dst, act)], 16)
                            assert wv == ideal, "K-major store with a bank conflict"
                            stats["xt_checked"] += 1
                        for e_ in range(VEC):
                            d_el = dst // ES + e_
                            assert np.all(dst[act] + 16 <= xt + XT_BYTES)
                            smem[d_el[act]] = vals[q, kg * VEC + e_][act]

        def pixel_copies(pw, tile, c_idx, s):
            """The bulk copies of warp pw's lanes for chunk c_idx's raw pixel tile: [(lane, dst byte, values)]."""
            n, k0, ph0, ow0 = tile
            xs = s * STAGE
            c0 = c_idx * CK
            ih0 = 2 * ph0 - 1
            ca, cb = max(ow0 - VEC, 0), min(ow0 + BW + VEC, W)
            copies = []
            if x_vec and cb > ca:
                for q0 in range(0, CK * SR, 128):
                    for ln in range(32):
                        q = q0 + 32 * pw + ln
                        if q >= CK * SR:
                            continue
                        c, sr = q // SR, q % SR
                        ih = ih0 + sr
                        if c0 + c < C and 0 <= ih < H:
                            src = ((n * C + c0 + c) * H + ih) * W + ca
                            assert (src * ES) % 16 == 0, "pixel copy source not 16-byte aligned"
                            dst = xs + ((c * SR + sr) * XRW + ca - (ow0 - VEC)) * ES
                            assert dst >= xs + (c * SR + sr) * XRW * ES
                            assert dst + (cb - ca) * ES <= xs + (c * SR + sr + 1) * XRW * ES
                            copies.append((ln, dst, xf[src:src + cb - ca]))
            return copies

        def weight_copies(pw, tile, c_idx, s):
            """The same for the raw weight rows (bulk path)."""
            n, k0, ph0, ow0 = tile
            wr_a = s * STAGE + XR_BYTES + XT_BYTES
            c0 = c_idx * CK
            copies = []
            if w_vec:
                for o0 in range(0, BN, 128):
                    for ln in range(32):
                        o = o0 + 32 * pw + ln
                        if o < BN and k0 + o < K:
                            src = ((k0 + o) * C + c0) * 9
                            assert (src * ES) % 16 == 0
                            copies.append((ln, wr_a + o * WRS, wf[src:src + 288 // ES]))
            return copies

        def weight_elements(pw, tile, c_idx, s):
            """The weights' element path: warp pw's lanes store the raw rows, zeros past C_in and K."""
            pl = 32 * pw + np.arange(32)
            n, k0, ph0, ow0 = tile
            wr_a = s * STAGE + XR_BYTES + XT_BYTES
            c0 = c_idx * CK
            for e0 in range(0, BN * CK * 9, 128):
                e = e0 + pl
                e = e[e < BN * CK * 9]
                o, f = e // (CK * 9), e % (CK * 9)
                oo = k0 + o
                okk = (oo < K) & (c0 + f // 9 < C)
                src = (oo * C + c0) * 9 + f
                smem[(wr_a + o * WRS) // ES + f] = np.where(okk, wf[np.where(okk, src, 0)], 0.0)

        def nbytes_of(copies):
            return int(sum(len(v) for _, _, v in copies) * ES)

        class Stream:
            """One walk over the block's flattened (tile, chunk) sequence: tile index, chunk, stage, use."""

            def __init__(self):
                self.t, self.c, self.s, self.u = blk, 0, 0, 0

            def advance(self):
                self.c += 1
                if self.c == nchunks:
                    self.c, self.t = 0, self.t + G
                self.s += 1
                if self.s == NS:
                    self.s, self.u = 0, self.u + 1

        def producer_v8(pw):
            """v8: transpose chunk j - 1 (after its copies land on rawb), then wait for stage j to be emptied
            and issue chunk j's pixel and weight copies on rawb."""
            tr, cp = Stream(), Stream()
            for j in range(total + 1):
                if j >= 1:
                    if x_vec and not skip_raw:
                        yield ("wait", m.rawb[tr.s], tr.u & 1, tr.u)
                    transpose_body(pw, decode(tr.t), tr.c, tr.s, j)
                    yield ("arrive", m.fullb[tr.s], 32, 0)
                    tr.advance()
                if j < total:
                    if cp.u >= 1 and not skip_empty:
                        yield ("wait", m.emptyb[cp.s], (cp.u - 1) & 1, cp.u - 1)
                    tile = decode(cp.t)
                    copies = pixel_copies(pw, tile, cp.c, cp.s) + weight_copies(pw, tile, cp.c, cp.s)
                    yield ("arrive", m.rawb[cp.s], 32, nbytes_of(copies))
                    for ln, dst, vals in copies:
                        m.bulk(m.rawb[cp.s], dst, vals)
                    if not w_vec:
                        weight_elements(pw, tile, cp.c, cp.s)
                    cp.advance()

        def producer_v9(pw):
            """v9: iteration j copies the pixels of chunk j + 2 (once every producer warp has transposed
            chunk j - 1: its fullb phase) on xb, the weights of chunk j (once the consumers emptied its
            stage) on wb, then transposes chunk j (after its pixels land on xb)."""
            px, wt, tr = Stream(), Stream(), Stream()

            def copy_pixels():
                if px.u >= 1 and not skip_reuse:
                    yield ("wait", m.fullb[px.s], (px.u - 1) & 1, px.u - 1)
                copies = pixel_copies(pw, decode(px.t), px.c, px.s)
                yield ("arrive", m.xb[px.s], 32, nbytes_of(copies))
                for ln, dst, vals in copies:
                    m.bulk(m.xb[px.s], dst, vals)
                px.advance()

            if total > 0:
                yield from copy_pixels()
            if total > 1:
                yield from copy_pixels()
            for j in range(total):
                if j + 2 < total:
                    yield from copy_pixels()
                if wt.u >= 1 and not skip_empty:
                    yield ("wait", m.emptyb[wt.s], (wt.u - 1) & 1, wt.u - 1)
                tile = decode(wt.t)
                if not w_vec:
                    weight_elements(pw, tile, wt.c, wt.s)
                copies = weight_copies(pw, tile, wt.c, wt.s)
                yield ("arrive", m.wb[wt.s], 32, nbytes_of(copies))
                for ln, dst, vals in copies:
                    m.bulk(m.wb[wt.s], dst, vals)
                wt.advance()
                if not skip_raw:
                    yield ("wait", m.xb[tr.s], tr.u & 1, tr.u)
                transpose_body(pw, decode(tr.t), tr.c, tr.s, j)
                yield ("arrive", m.fullb[tr.s], 32, 0)
                tr.advance()

        producer = producer_v9 if proto == "v9" else producer_v8
        wbars = m.wb if proto == "v9" else m.rawb      # what the consumers wait on for the weights

        # ------------------------------------------------------------------ consumer warpgroup wg
        def consumer(wg):
            tid = np.arange(128)
            wq, lane = tid >> 5, tid & 31
            g, t = lane >> 2, lane & 3
            oc = 64 * (wg % WGN) + 16 * wq + g
            rr0 = 2 * (wg // WGN)
            fbase = oc * WRW + (9 * t if ES == 4 else 18 * t)
            b_desc0 = ((LBO_B >> 4) << 16) | ((SBO_B >> 4) << 32) | ((((0 + XR_BYTES) >> 4) + rr0 * SWA + 1) & 0x3FFF)
            acc = np.zeros((2, 128, 64))
            fr = np.full((9, 4, 128, KA), np.nan)             # fragment registers: [tap][reg][thread][half]
            groups = []                                       # committed, not yet run
            nfrag = [0]
            cur = []                                          # issued since the last commit
            i = np.arange(64)
            d_row = 16 * wq[:, None] + g[:, None] + 8 * ((i[None, :] >> 1) & 1)
            d_col = 8 * (i[None, :] >> 2) + 2 * t[:, None] + (i[None, :] & 1)
            # A fragment -> matrix position (ISA): reg r, half h of thread -> (row, k)
            a_row = np.zeros((4, 128, KA), dtype=int)
            a_k = np.zeros((4, 128, KA), dtype=int)
            for r in range(4):
                for h in range(KA):
                    a_row[r, :, h] = 16 * wq + g + 8 * (r & 1)
                    a_k[r, :, h] = (t + 4 * (r >> 1)) if ES == 4 else (2 * t + 8 * (r >> 1) + h)

            def load_frags(s, T0, T1):
                wr0 = (s * STAGE + XR_BYTES + XT_BYTES) // ES + fbase       # element index
                for tap in range(T0, T1):
                    nfrag[0] += 4
                    for r in range(4):
                        if ES == 4:
                            e = wr0 + (r & 1) * 8 * WRW + (r >> 1) * 4 * 9 + tap
                            fr[tap, r, :, 0] = smem[e]
                            addrs = [e]
                        else:
                            e = wr0 + (r & 1) * 8 * WRW + (r >> 1) * 8 * 9 + tap
                            fr[tap, r, :, 0] = smem[e]
                            fr[tap, r, :, 1] = smem[e + 9]
                            addrs = [e, e + 9]
                        for ea in addrs:
                            lo = s * STAGE + XR_BYTES + XT_BYTES
                            assert np.all(ea * ES >= lo) and np.all(ea * ES + ES <= lo + WR_BYTES)
                            if not check_banks or nfrag[0] > 2 * NS * 9 * 4:
                                continue
                            stats["frag_checked"] += 1
                            for wp in range(4):
                                wv, ideal = wavefronts([int(a) * ES for a in ea[32 * wp:32 * wp + 32]], ES)
                                assert wv == ideal, "fragment load with a bank conflict"

            def run_op(op):
                rr, tap, desc, scale = op
                A = np.zeros((64, KSTEP))
                A[a_row[:, :, :].reshape(-1), a_k.reshape(-1)] = fr[tap].reshape(-1)
                start, lbo, sbo = decode_desc(desc)
                nn, kk = np.arange(128)[None, :], np.arange(KSTEP)[:, None]
                byte = start + (nn // 8) * sbo + (nn % 8) * 16 + (kk * ES // 16) * lbo + (kk * ES) % 16
                st = (start - XR_BYTES) // STAGE * STAGE + XR_BYTES     # the XT region the start lies in
                assert byte.min() >= st and byte.max() + ES <= st + XT_BYTES, "descriptor read outside its tile"
                B = smem[byte // ES]                                   # KSTEP x 128
                D = A @ B
                frag = D[d_row, d_col]
                acc[rr] = (acc[rr] if scale else 0.0) + frag

            def fence():
                pass

            def issue(s, T0, T1, first):
                db0 = b_desc0 + s * (STAGE // 16)
                for tap in range(T0, T1):
                    kh, kw = tap // 3, tap % 3
                    for rr in range(2):
                        cur.append((rr, tap, db0 + (rr + kh) * SWA + kw, tap > 0 or not first))

            def commit():
                nonlocal cur
                if groups_late:
                    groups.append(cur)
                else:
                    for op in cur:
                        run_op(op)
                cur = []

            def wait_group(nkeep):
                while len(groups) > nkeep:
                    for op in groups.pop(0):
                        run_op(op)

            s, u = 0, 0
            for tile in range(blk, ntiles, G):
                n, k0, ph0, ow0 = decode(tile)
                prev_s = 0
                for ch in range(nchunks):
                    if ch == 0:
                        yield ("wait", m.fullb[s], u & 1, u)
                        yield ("wait", wbars[s], u & 1, u)
                        load_frags(s, 0, 5)
                    fence()
                    issue(s, 0, 5, ch == 0)
                    commit()
                    if ch > 0:
                        wait_group(1)
                        if not release_early:
                            yield ("arrive", m.emptyb[prev_s], 4, 0)
                    load_frags(s, 5, 9)
                    fence()
                    issue(s, 5, 9, ch == 0)
                    commit()
                    if release_early:                     # the bug: before the stage's wgmmas ran
                        yield ("arrive", m.emptyb[s], 4, 0)
                    ns, nu = (0, u + 1) if s == NS - 1 else (s + 1, u)
                    if ch < nchunks - 1:
                        yield ("wait", m.fullb[ns], nu & 1, nu)
                        yield ("wait", wbars[ns], nu & 1, nu)
                        wait_group(1)
                        load_frags(ns, 0, 5)
                    prev_s, s, u = s, ns, nu
                wait_group(0)
                if not release_early:
                    yield ("arrive", m.emptyb[prev_s], 4, 0)
                # epilogue
                ph = ph0 + wg // WGN
                for ii in range(0, 64, 2):
                    v = np.maximum(np.maximum(acc[0][:, ii], acc[1][:, ii]), np.maximum(acc[0][:, ii + 1], acc[1][:, ii + 1]))
                    hi = (ii >> 1) & 1
                    k = k0 + oc + 8 * hi
                    pw = (ow0 >> 1) + 4 * (ii >> 2) + t
                    okk = (k < K) & (pw < PW) & (ph < PH)
                    if not okk.any():
                        continue
                    kk, pp, vv = k[okk], pw[okk], v[okk]
                    assert np.all(np.isnan(y[n, kk, ph, pp])), "one store per pooled output"
                    y[n, kk, ph, pp] = np.maximum(vv + b[kk], 0.0)
            assert not groups and not cur

        # ------------------------------------------------------------------ scheduler
        agents = [producer(p) for p in range(4)] + [consumer(c) for c in range(2)]
        req = [None] * len(agents)
        alive = list(range(len(agents)))

        def step(a):
            """Advance agent a past every request it can satisfy now; True when it made progress."""
            moved = False
            while True:
                r = req[a]
                if r is None:
                    try:
                        req[a] = r = next(agents[a])
                    except StopIteration:
                        alive.remove(a)
                        return True
                # the favoured side runs until it blocks; the other side hands control back after
                # every request (random: now and then)
                handback = ((policy == "producer" and a >= 4) or (policy == "consumer" and a < 4)
                            or (policy == "random" and rng.random() < 0.4))
                if r[0] == "arrive":
                    r[1].arrive(r[2], r[3])
                    req[a] = None
                    moved = True
                    if handback:
                        return True
                    continue
                _, bar, parity, use = r
                if not bar.ready(parity) and m.copies_late and any(bb is bar for bb, _, _ in m.pending):
                    m.land(bar)                            # as late as possible: only a waiter forces it
                if not bar.ready(parity):
                    return moved
                assert bar.phase == use + 1, f"phase aliasing: waited use {use}, barrier at phase {bar.phase}"
                req[a] = None
                moved = True
                if handback:
                    return True

        while alive:
            order = list(alive)
            if policy == "producer":
                order.sort(key=lambda a: a >= 4)
            elif policy == "consumer":
                order.sort(key=lambda a: a < 4)
            else:
                rng.shuffle(order)
            progressed = False
            for a in order:
                if step(a):
                    progressed = True
                    break
            if not progressed and alive:
                assert all(req[a] is not None and req[a][0] == "wait" for a in alive), "internal"
                raise AssertionError(f"deadlock: {[(a, req[a][2], req[a][3]) for a in alive]}")
        assert not m.pending, "bulk copies never waited for"
    return y, stats


def test_emulation_constants_match_the_kernel_source():
    """The emulator's layout constants and index formulas are the kernel's."""
    for line in ["constexpr int VEC = 16 / ES;", "constexpr int CK = 2 * VEC;", "constexpr int BW = 128;",
                 "constexpr int WGN = BN / 64;", "constexpr int WGR = 2 / WGN;", "constexpr int ROWS = 2 * WGR;",
                 "constexpr int SR = ROWS + 2;", "constexpr int PT = 128;", "constexpr int NS = 3;",
                 "constexpr int XRW = 144;", "constexpr int XR_BYTES = CK * SR * XRW * ES;",
                 "constexpr int SWA = BW + 4;", "constexpr int NPIX = SR * SWA;", "constexpr int XT_BYTES = 32 * NPIX;",
                 "constexpr int RC_OFF = VEC - 2;", "constexpr int WRS = 304;", "constexpr int WR_BYTES = WRS * BN;",
                 "constexpr int STAGE_BYTES = XR_BYTES + XT_BYTES + WR_BYTES;", "constexpr int BAR_OFF = NS * STAGE_BYTES;",
                 "constexpr int LBO_B = NPIX * 16, SBO_B = 128;", "constexpr int WRW = WRS / ES;",
                 "constexpr int NPAIR = NPIX / 2;",
                 "mbar_init(rawb(s), PT);", "mbar_init(fullb(s), PT);", "mbar_init(emptyb(s), 8);",
                 # producer: transposition
                 "const int ih0 = 2 * tt.ph0 - 1, iw0 = tt.ow0 - 2;",
                 "if (x_vec) mbar_wait(rawb(s_tr), u_tr & 1, broken);",
                 "for (int pp = pl; pp < NPAIR; pp += PT) {",
                 "const int sr = pp / (SWA / 2), sc = 2 * (pp - sr * (SWA / 2));",
                 "const bool ok0 = rok && iw >= 0 && iw < W, ok1 = rok && iw + 1 >= 0 && iw + 1 < W;",
                 "const unsigned char* src = xs + (sr * XRW + sc + RC_OFF) * ES;",
                 "const uint2 v = *reinterpret_cast<const uint2*>(src + c * (SR * XRW * 4));",
                 "unsigned v0 = *reinterpret_cast<const unsigned*>(src + c * (SR * XRW * 2));",
                 "const unsigned p0 = __byte_perm(v0, v1, 0x5410), p1 = __byte_perm(v0, v1, 0x7632);",
                 "const raw_t* src = xn + (long long)c0 * HW + (long long)ih * W + iw;",
                 "const unsigned v = (ok && c0 + c < C) ? (unsigned)src[c * HW + p] : 0u;",
                 "*reinterpret_cast<uint4*>(xt + (kg * NPIX + 2 * pp + (q ^ flip)) * 16) =",
                 "const int flip = (pl >> 2) & 1;", "wd[0][kg][r] = flip ? a1 : a0;", "wd[1][kg][r] = flip ? a0 : a1;",
                 "mbar_arrive(fullb(s_tr));", "t_tr += gridDim.x;",
                 "if (t_tr < ntiles) tt = decode(t_tr, ctiles, rtiles, ktiles);",
                 "if (j >= 1) transpose_chunk();", "if (j < total) copy_chunk();",
                 # producer: copies
                 "if (u_copy >= 1) mbar_wait(emptyb(s_copy), (u_copy - 1) & 1, broken);",
                 "const int ca = max(tc.ow0 - VEC, 0), cb = min(tc.ow0 + BW + VEC, W);",
                 "for (int q = pl; q < CK * SR; q += PT) {", "const int c = q / SR, sr = q - c * SR, ih = ih0 + sr;",
                 "bulk_copy(xs_a + ((c * SR + sr) * XRW + ca - (tc.ow0 - VEC)) * ES,",
                 "xn + (long long)(c0 + c) * HW + (long long)ih * W + ca, (cb - ca) * ES, rawb(s_copy));",
                 "bulk_copy(wr_a + o * WRS, wr + ((long long)(tc.k0 + o) * C + c0) * 9, 288, rawb(s_copy));",
                 "mbar_arrive_tx(rawb(s_copy), bytes);",
                 "const int o = e / (CK * 9), f = e - o * (CK * 9), oo = tc.k0 + o;",
                 "wd[o * WRW + f] = (oo < K && c0 + f / 9 < C) ? wr[((long long)oo * C + c0) * 9 + f] : (raw_t)0;",
                 "const bool x_vec = (W % VEC == 0) && ((reinterpret_cast<unsigned long long>(x) & 15) == 0);",
                 "const bool w_vec = (C % CK == 0) && ((reinterpret_cast<unsigned long long>(w) & 15) == 0);",
                 # consumers
                 "const int oc = 64 * (wg % WGN) + 16 * wq + g;", "const int rr0 = 2 * (wg / WGN);",
                 "const int fbase = oc * WRW + (ES == 4 ? 9 * t : 18 * t);",
                 "((((sbase + XR_BYTES) >> 4) + (unsigned)(rr0 * SWA + 1)) & 0x3FFF);",
                 "fr[tap][r] = tf32_rna(wrs[(r & 1) * 8 * WRW + (r >> 1) * 4 * 9 + tap]);",
                 "const int e = (r & 1) * 8 * WRW + (r >> 1) * 8 * 9 + tap;",
                 "fr[tap][r] = __byte_perm((unsigned)wrs[e], (unsigned)wrs[e + 9], 0x5410);",
                 "unsigned long long db0 = b_desc0 + (unsigned)(s * (STAGE_BYTES / 16));",
                 "wgmma_rs(acc[rr], fr[tap], db0 + (unsigned)((rr + kh) * SWA + kw), tap > 0 || !first_chunk);",
                 "if (lane == 0) mbar_arrive(emptyb(s));",
                 "load_frags(s, 0, 5);", "issue(s, 0, 5, ch == 0);", "load_frags(s, 5, 9);", "issue(s, 5, 9, ch == 0);",
                 "load_frags(ns, 0, 5);", "release(prev_s);",
                 "const int ph = tl.ph0 + wg / WGN;", "const int pw = (tl.ow0 >> 1) + 4 * (i >> 2) + t;",
                 "const int k = o0 + 8 * hi;",
                 "r.ow0 = (int)(t % ctiles) * BW;", "r.ph0 = (int)((t / ctiles) % rtiles) * WGR;",
                 "r.n = (int)(bz / ktiles);", "r.k0 = (int)(bz % ktiles) * BN;",
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 \" KS_R64 \"{%64, %65, %66, %67}, %68, p, 1, 1;",
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 \" KS_R64 \"{%64, %65, %66, %67}, %68, p, 1, 1, 0;",
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];",
                 "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;",
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;"]:
        assert line in SRC, line
    # the consumer's loop order: group A, release of the previous chunk, group B, then the next
    # chunk's waits before wait_group 1 and its first fragments
    body = SRC[SRC.index("for (int ch = 0; ch < nchunks; ++ch) {"):SRC.index("// ---- epilogue")]
    order = ["issue(s, 0, 5, ch == 0);", "wgmma_wait<1>();", "release(prev_s);", "issue(s, 5, 9, ch == 0);",
             "mbar_wait(fullb(ns), nu & 1, broken);", "wgmma_wait<1>();", "load_frags(ns, 0, 5);",
             "wgmma_wait<0>();", "release(prev_s);"]
    pos = 0
    for o in order:
        pos = body.index(o, pos) + len(o)
    spec = (ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml").read_text()
    assert 'shared_bytes: "3 * (8832 * (256 // BN + 2) + 304 * BN) + 128"' in spec
    assert 'grid: ["min(cdiv(PW, 64) * cdiv(PH, 128 // BN) * N * cdiv(C_out, BN), SM_COUNT)", 1, 1]' in spec


def test_v9_is_v8_with_the_emulated_producer_protocol():
    """v9's source: v8's layouts, consumers and epilogue (every v8 line the emulator mirrors outside the
    producer's copy / transposition ordering is in v9 too), and the producer protocol producer_v9
    emulates: pixels on xb two chunks ahead after fullb of the stage's previous chunk, weights on wb after
    emptyb, the transposition after xb, the consumers waiting on fullb and wb."""
    assert "constexpr int SMEM_BYTES = BAR_OFF + 128;      // 12 mbarriers, then the watchdog flag (byte 96)" in SRC9
    shared = [ln.strip() for ln in SRC.splitlines() if ln.strip() and not ln.strip().startswith("//")
              and "rawb" not in ln and "_copy" not in ln and "t_tr" not in ln and "s_tr" not in ln
              and "u_tr" not in ln and "c_tr" not in ln and "tc." not in ln and " tc " not in ln
              and "tt = tc" not in ln and "wgmma_async(" not in ln]
    missing = {ln for ln in shared if ln not in SRC9}
    # the v8 lines v9 restates: the register split (v9's producer holds three streams), the barrier layout
    # and the watchdog flag's place, v8's producer loop
    assert missing == {
        "#define CREGS 208",
        "constexpr int SMEM_BYTES = BAR_OFF + 128;      // 9 mbarriers, then the watchdog flag (byte 72)",
        "auto fullb = [&](int s) { return bar0 + 8 * (NS + s); };",
        "auto emptyb = [&](int s) { return bar0 + 8 * (2 * NS + s); };",
        "volatile unsigned* broken = reinterpret_cast<volatile unsigned*>(smem + BAR_OFF + 8 * 3 * NS);",
        "auto copy_chunk = [&]() {", "const unsigned wr_a = xs_a + XR_BYTES + XT_BYTES;",
        "} else {                          // element path: zeros past C_in and K",
        "raw_t* wd = reinterpret_cast<raw_t*>(xs + XR_BYTES + XT_BYTES);",
        "for (long long j = 0; j <= total; ++j) {", "if (j >= 1) transpose_chunk();", "if (j < total) copy_chunk();"}, missing
    for line in ["#define CREGS 200", "mbar_init(xb(s), PT);", "mbar_init(wb(s), PT);", "mbar_init(fullb(s), PT);", "mbar_init(emptyb(s), 8);",
                 "volatile unsigned* broken = reinterpret_cast<volatile unsigned*>(smem + BAR_OFF + 8 * 4 * NS);",
                 "if (px.u >= 1) mbar_wait(fullb(px.s), (px.u - 1) & 1, broken);",
                 "mbar_arrive_tx(xb(px.s), bytes);",
                 "xn + (long long)(c0 + c) * HW + (long long)ih * W + ca, (cb - ca) * ES, xb(px.s));",
                 "if (wt.u >= 1) mbar_wait(emptyb(wt.s), (wt.u - 1) & 1, broken);",
                 "mbar_arrive_tx(wb(wt.s), bytes);",
                 "bulk_copy(wr_a + o * WRS, wr + ((long long)(k0 + o) * C + c0) * 9, 288, wb(wt.s));",
                 "wd[o * WRW + f] = (oo < K && c0 + f / 9 < C) ? wr[((long long)oo * C + c0) * 9 + f] : (raw_t)0;",
                 "\n            mbar_wait(xb(tr.s), tr.u & 1, broken);\n",   # unconditional (v8's had if (x_vec))
                 "asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");  // for wgmma's reads\n"
                 "            mbar_arrive(fullb(tr.s));",   # the transposition's reads and writes, then fullb
                 "mbar_wait(wb(s), u & 1, broken);", "mbar_wait(wb(ns), nu & 1, broken);",
                 "if (++q.s == NS) { q.s = 0; ++q.u; }", "q.t += gridDim.x;"]:
        assert line in SRC9, line
    # the producer's order: two pixel chunks first, then per iteration pixels (j + 2), weights (j), transposition (j)
    loop = SRC9[SRC9.index("if (total > 0) copy_pixels();             // chunks 0 and 1"):SRC9.index("return;\n    }\n\n    // =====")]
    pos = 0
    for o in ["if (total > 0) copy_pixels();", "if (total > 1) copy_pixels();", "for (long long j = 0; j < total; ++j) {",
              "if (j + 2 < total) copy_pixels();", "copy_weights();", "transpose_chunk();"]:
        pos = loop.index(o, pos) + len(o)
    # the weights' element path stores before its arrival on wb (the arrival releases them)
    body = SRC9[SRC9.index("auto copy_weights = [&]() {"):SRC9.index("auto transpose_chunk = [&]() {")]
    assert body.index("wd[o * WRW + f] =") < body.index("mbar_arrive_tx(wb(wt.s), bytes);") < body.index("bulk_copy(")


# (N, C_in, C_out, H, W, x_vec in float32, in bfloat16): odd H / W, H = W = 2, C_out = 7 / 70 / 9 (tile
# tails; 70 = two BN = 64 tiles), C_in = 1 / 3 / 20 (chunk tails: the weights' element path) / 32 / 24
# (float32: bulk weights; bfloat16: 24 % 16 != 0, a half-empty last chunk with bulk pixel rows), W = 136
# (two column tiles, the second 8 columns wide: partial bulk rows), W = 8 / 16 (bulk rows narrower than the tile)
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 7, 5, 7), (1, 20, 70, 3, 9), (1, 32, 9, 7, 136), (2, 24, 16, 4, 16),
          (1, 16, 130, 5, 8)]


def _vec(shape, ES):
    N, C, K, H, W = shape
    VEC, CK = 16 // ES, 32 // ES
    return W % VEC == 0, C % CK == 0


@pytest.mark.parametrize("ES", [4, 2], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("BN", [64, 128])
@pytest.mark.parametrize("proto", ["v8", "v9"])
def test_v8_matches_conv_relu_maxpool_under_every_schedule(ES, BN, proto):
    rng = np.random.default_rng(BN + ES)
    for si, (N, C, K, H, W) in enumerate(SHAPES):
        x = rng.standard_normal((N, C, H, W))
        w = rng.standard_normal((K, C, 3, 3))
        b = rng.standard_normal(K)
        ref = reference(x, w, b)
        xv, wv = _vec((N, C, K, H, W), ES)
        # schedules: copies and wgmma groups as late as allowed / as early as issued; the producer first,
        # the consumers first, seeded random interleavings; the spec's grid and a small one (blocks walk
        # several tiles: the stream crosses tile boundaries); the element paths where the bulk ones apply
        cases = [dict(policy="producer", copies_late=True, groups_late=True, check_banks=True),
                 dict(policy="consumer", copies_late=True, groups_late=True, grid=2),
                 dict(policy="random", seed=si, copies_late=False, groups_late=True, grid=1),
                 dict(policy="random", seed=si + 7, copies_late=True, groups_late=False, grid=3)]
        if xv or wv:
            cases.append(dict(policy="random", seed=si + 11, x_vec=False, w_vec=False, grid=2))
        for case in cases:
            kw = dict(dict(x_vec=xv, w_vec=wv, proto=proto), **case)
            got, stats = emulate(x, w, b, ES, BN, **kw)
            label = str(((N, C, K, H, W), kw))
            assert not np.isnan(got).any(), (label, "unwritten output or an unwritten shared-memory read")
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10, err_msg=label)
            if kw.get("check_banks"):
                assert stats["frag_checked"] and stats["xt_checked"], stats
                if stats["xr_ideal"]:  # row wraps inside a warp: at most one extra wavefront each
                    assert stats["xr_wave"] <= 1.5 * stats["xr_ideal"], (label, stats)


@pytest.mark.parametrize("proto", ["v8", "v9"])
def test_emulation_catches_early_release_missing_waits(proto):
    """The checks can fail: a consumer releasing its stage right after committing its last wgmmas
    (before they ran) lets the producer rewrite operands still to be read; a producer that does not wait
    for a stage's empty barrier overwrites a stage in use; one that transposes before its bulk copies
    land reads stale shared memory; v9's producer copying the pixels of a chunk into a raw tile before
    every producer warp has transposed the chunk it held (skip_reuse: copies landing at issue and one
    warp ahead of another overwrite pixels still to be read). Each is caught by at least one schedule
    (wrong or NaN outputs, a deadlock or an aliased phase)."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((1, 40, 4, 8)), rng.standard_normal((16, 40, 3, 3)), rng.standard_normal(16)
    ref = reference(x, w, b)
    got, _ = emulate(x, w, b, 4, 64, grid=1, policy="producer", proto=proto)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    bugs = [dict(release_early=True), dict(skip_empty=True), dict(skip_raw=True)]
    if proto == "v9":  # pixels copied into a raw tile another producer warp still reads
        bugs.append(dict(skip_reuse=True))
    for bug in bugs:
        caught = []
        for sched in (dict(policy="producer"), dict(policy="random", seed=1), dict(policy="consumer"),
                      dict(policy="random", seed=2, copies_late=False), dict(policy="random", seed=3, copies_late=False)):
            try:
                got, _ = emulate(x, w, b, 4, 64, grid=1, proto=proto, **sched, **bug)
                caught.append(bool(np.isnan(got).any() or not np.allclose(got, ref, rtol=1e-6, atol=1e-6)))
            except AssertionError as e:
                assert any(s in str(e) for s in ("deadlock", "aliasing", "more arrivals")), (bug, str(e)[:300])
                caught.append(True)
        assert any(caught), bug


def test_wavefront_model():
    assert wavefronts([16 * q for q in range(32)], 16) == (4, 4)
    assert wavefronts([32 * q for q in range(32)], 16) == (8, 4)
    assert wavefronts([4 * q for q in range(32)], 4) == (1, 1)
    assert wavefronts([128 * q for q in range(32)], 4) == (32, 1)
    assert wavefronts([2 * q for q in range(32)], 2) == (1, 1)
    assert wavefronts([8 * q for q in range(32)], 8) == (2, 2)


def _v8_builds(version="v8"):
    from kernelsynth.backends.cuda import defines, kernel_arch
    from kernelsynth.spec import load_spec

    spec = load_spec(ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml", task_folder=True)
    v8 = next(c for c in spec.candidates if c.version == version)
    return v8, [(dt, cfg, defines(dt, cfg), kernel_arch("sm_90", v8.launch)) for dt in spec.dtypes for cfg in v8.configs()]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize("version", ["v8", "v9"])
def test_v8_compiles_for_sm90a_without_local_memory_or_serialized_wgmma(nvcc_cubin, version):
    """Both dtypes x every config build for sm_90a, with no spill or stack (the consumers' registers
    come from setmaxnreg: ptxas must honour it), no wgmma wait injected by ptxas (C7517) and no
    serialized wgmma (C7512 / C7514); no setmaxnreg ignored (C7508)."""
    v8, builds = _v8_builds(version)
    assert len(builds) == 4 and {b[3] for b in builds} == {"sm_90a"}

    def nvcc(build):
        dt, cfg, macros, a = build
        return ((dt, cfg), *nvcc_cubin(a, macros, v8.file))

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(nvcc, builds))
    for label, rc, err in results:
        assert rc == 0, (label, err[-3000:])
        assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in err, (label, err)
        for code in ("C7508", "C7512", "C7514", "C7517"):
            assert code not in err, (label, code, err)
        assert "Performance Loss" not in err and "serialized" not in err, (label, err)
        regs = int(re.search(r"Used (\d+) registers", err).group(1))
        assert regs <= 168, (label, regs)
