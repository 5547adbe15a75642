"""CPU emulation of conv_relu_maxpool v5 (specs/conv_relu_maxpool/kernels/v5_pipelined_mma.cu).

As tests/test_conv_tc_emulation.py does for v4: no GPU runs here, so this file re-runs v5's index
math in NumPy -- the same grid, the same three-stage buffer rotation, the same staging (16-byte
cp.async path and element path), the same per-lane fragment addresses read straight from the raw
staged tiles, the same epilogue shuffle and stores -- and checks the result against F.conv2d ->
ReLU -> MaxPool2d on ragged shapes. The mma.sync fragment tables (m16n8k8 .tf32 and m16n8k16
.bf16, float32 C/D) are the PTX ISA's, shared with the v4 emulation. Shared memory starts as NaN,
and a stage buffer keeps the previous chunk's values until it is rewritten, so a read of an
unwritten byte or of the wrong stage changes the output. It also checks the property the layout
was padded for: every fragment load of a warp touches 32 distinct banks (or the same word).
Arithmetic is float64: the layout is what is tested; rounding is checked on the GPU.
"""

import re

import numpy as np
import pytest

from test_conv_tc_emulation import ROOT, cdiv, reference

SRC = (ROOT / "specs" / "conv_relu_maxpool" / "kernels" / "v5_pipelined_mma.cu").read_text()


def banks_ok(elem, ES):
    """elem: (..., 32) element indexes of one warp-wide load of ES-byte elements. True when no two
    lanes hit the same 4-byte bank at different words (no shared-memory bank conflict)."""
    word = ((elem * ES) // 4).reshape(-1, 32)
    bank = word % 32
    clash = (bank[:, :, None] == bank[:, None, :]) & (word[:, :, None] != word[:, None, :])
    return not clash.any()


def emulate(x, w, b, ES, BW, BN, vec_ok=True, chan_pad=8, stages=3, ahead=None):
    """Run v5's grid on float64 arrays as if the element size were ES bytes (4: float32, 2:
    bfloat16). stages is the STAGES tunable; the kernel copies ahead = stages - 1 chunks.
    vec_ok=False forces the element staging path. chan_pad and ahead exist to show the checks can
    fail (another channel-stride padding: bank conflicts; copying as far ahead as there are
    buffers: a chunk overwritten before it is read). Returns (y, conflict_free)."""
    N, C, H, W = x.shape
    K = w.shape[0]
    PH, PW = H // 2, W // 2
    VEC, CK = 16 // ES, 32 // ES
    SWC = BW + 2 * VEC
    SCH = SWC // VEC
    CS = 4 * SWC + chan_pad
    WROW = 304
    WRE = WROW // ES
    XST = 128 * BW + 2304
    STAGE = XST + WROW * BN
    ahead = stages - 1 if ahead is None else ahead
    assert CK * CS * ES <= XST
    MI, NI = BW // 64, BN // 16
    KA = 4 // ES  # channels per fragment register (= elements per register)
    EPW = KA
    KK = 8 * EPW
    xf, wf = x.reshape(-1), w.reshape(-1)
    x_vec = vec_ok and W % VEC == 0
    w_vec = vec_ok and C % CK == 0
    y = np.full((N, K, PH, PW), np.nan)
    nchunks = cdiv(C, CK)

    lane = np.arange(32)
    warp = np.arange(8)[:, None]
    wm, wn = warp & 3, warp >> 2
    g, t = lane >> 2, lane & 3
    a_off = (KA * t) * CS + wm * (BW // 4) + g + VEC - 1  # (8, 32)
    b_off = (wn * (BN // 2) + g) * WRE + (KA * t) * 9

    e = np.arange(EPW)
    a_row = (g[:, None, None] + 8 * (np.arange(4)[None, :, None] & 1)) + 0 * e
    a_col = EPW * t[:, None, None] + e + (np.arange(4)[None, :, None] >> 1) * 4 * EPW
    b_row = EPW * t[:, None, None] + e + np.arange(2)[None, :, None] * 4 * EPW
    b_col = g[:, None, None] + 0 * b_row
    c_row = g[:, None] + 8 * (np.arange(4)[None, :] >> 1)
    c_col = 2 * t[:, None] + (np.arange(4)[None, :] & 1)

    def mma(acc, af, bf):
        A = np.zeros((8, 16, KK))
        B = np.zeros((8, KK, 8))
        A[:, a_row, a_col] = af
        B[:, b_row, b_col] = bf
        acc += (A @ B)[:, c_row, c_col]

    conflict_free = True

    def frag(smem, base, lo, hi, stride):
        """One fragment register per (warp, lane): elements base (+ stride for 16-bit), checked
        to lie inside [lo, hi) -- the stage region the kernel means to read."""
        nonlocal conflict_free
        idx = base[..., None] + np.arange(EPW) * stride  # (8, 32, EPW)
        assert idx.min() >= lo and idx.max() < hi, "fragment read outside its stage region"
        for j in range(EPW):
            conflict_free &= banks_ok(idx[..., j], ES)
        return smem[idx]

    grid = (cdiv(PW, BW // 2), PH, N * cdiv(K, BN))
    for bz in range(grid[2]):
        ktiles = cdiv(K, BN)
        n, k0 = bz // ktiles, (bz % ktiles) * BN
        xn_off = n * C * H * W
        for by in range(grid[1]):
            for bx in range(grid[0]):
                ow0, ph = bx * BW, by
                ih0, gc0 = 2 * ph - 1, ow0 - VEC
                smem = np.full(stages * STAGE // ES, np.nan)

                def stage(chunk, s):
                    c0 = chunk * CK
                    xs, ws = s * STAGE // ES, (s * STAGE + XST) // ES
                    q = np.arange(CK * 4 * SCH)
                    sc, r, c = q % SCH, (q // SCH) % 4, q // (4 * SCH)
                    ih, cc, gcol = ih0 + r, c0 + c, gc0 + sc * VEC
                    dst = xs + c * CS + r * SWC + sc * VEC
                    ee = np.arange(VEC)
                    assert (dst + VEC).max() <= xs + XST // ES
                    row_in = (cc < C) & (ih >= 0) & (ih < H)
                    col = gcol[:, None] + ee
                    if x_vec:
                        ok = np.broadcast_to((row_in & (gcol >= 0) & (gcol + VEC <= W))[:, None], col.shape)
                    else:
                        ok = row_in[:, None] & (col >= 0) & (col < W)
                    src = xn_off + (cc[:, None] * H + ih[:, None]) * W + col
                    smem[dst[:, None] + ee] = np.where(ok, xf[np.where(ok, src, 0)], 0.0)
                    q = np.arange(BN * 18)
                    nn, p = q // 18, q % 18
                    kk = k0 + nn
                    dst = ws + (nn * WROW + p * 16) // ES
                    base = (kk * C + c0) * 9 + p * VEC
                    f = p[:, None] * VEC + ee
                    if w_vec:
                        ok = np.broadcast_to((kk < K)[:, None], f.shape)
                    else:
                        ok = (kk[:, None] < K) & (c0 * 9 + f < C * 9)
                    src = base[:, None] + ee
                    smem[dst[:, None] + ee] = np.where(ok, wf[np.where(ok, src, 0)], 0.0)

                acc = np.zeros((2, MI, NI, 8, 32, 4))
                for s in range(ahead):  # the kernel's prologue: STAGES - 1 chunks ahead
                    if s < nchunks:
                        stage(s, s % stages)
                for i in range(nchunks):
                    if i + ahead < nchunks:
                        stage(i + ahead, (i + ahead) % stages)  # copies may land at once: the worst case
                    xs0, ws0 = (i % stages) * STAGE // ES, ((i % stages) * STAGE + XST) // ES
                    for kh in range(3):
                        for kw in range(3):
                            tap = kh * 3 + kw
                            bf = []
                            for ni in range(NI):
                                p = ws0 + b_off + ni * 8 * WRE + tap
                                lo, hi = ws0, ws0 + WROW * BN // ES
                                bf.append(np.stack([frag(smem, p, lo, hi, 9),
                                                    frag(smem, p + 4 * KA * 9, lo, hi, 9)], axis=2))
                            for rr in range(2):
                                for mi in range(MI):
                                    p = xs0 + a_off + (rr + kh) * SWC + mi * 16 + kw
                                    lo, hi = xs0, xs0 + XST // ES
                                    af = np.stack([frag(smem, p, lo, hi, CS), frag(smem, p + 8, lo, hi, CS),
                                                   frag(smem, p + 4 * KA * CS, lo, hi, CS),
                                                   frag(smem, p + 4 * KA * CS + 8, lo, hi, CS)], axis=2)
                                    for ni in range(NI):
                                        mma(acc[rr, mi, ni], af, bf[ni])
                v = np.maximum(acc[0], acc[1])
                v = np.maximum(v, v[:, :, :, lane ^ 4])  # __shfl_xor_sync(v, 4)
                for ni in range(NI):
                    for c in range(2):
                        k = k0 + wn * (BN // 2) + ni * 8 + 2 * t + c  # (8, 32)
                        for mi in range(MI):
                            for h in range(2):
                                pw = (ow0 + wm * (BW // 4) + mi * 16 + g + h * 8) >> 1
                                ok = ((g & 1) == 0) & (k < K) & (pw < PW)
                                kk, pp = np.broadcast_to(k, ok.shape)[ok], np.broadcast_to(pw, ok.shape)[ok]
                                assert np.all(np.isnan(y[n, kk, ph, pp])), "one store per pooled output"
                                y[n, kk, ph, pp] = np.maximum(v[mi, ni, :, :, 2 * h + c][ok] + b[kk], 0.0)
    return y, conflict_free


def test_emulation_constants_match_the_kernel_source():
    """The emulator's layout constants are the kernel's (a change to one must reach the other)."""
    for line in ["constexpr int CK = 32 / ES;", "constexpr int SWC = BW + 2 * VEC;", "constexpr int CS = 4 * SWC + 8;",
                 "constexpr int WROW = 304;", "constexpr int XST = 128 * BW + 2304;",
                 "constexpr int STAGE_BYTES = XST + WROW * BN;", "cp.async.wait_group %0;\\n\" ::\"n\"(STAGES - 2)",
                 "if (i + STAGES - 1 < nchunks) stage(i + STAGES - 1, (i + STAGES - 1) % STAGES);",
                 "constexpr int MI = BW / 64;", "constexpr int NI = BN / 16;",
                 "const int a_off = (KA * t) * CS + wm * (BW / 4) + g + VEC - 1;",
                 "const int b_off = (wn * (BN / 2) + g) * WRE + (KA * t) * 9;",
                 "const raw_t* p = xs + (rr + kh) * SWC + mi * 16 + kw;",
                 "af[2] = frag(p + 4 * KA * CS, CS);", "bf[ni][1] = frag(p + 4 * KA * 9, 9);",
                 "const int pw = (ow0 + wm * (BW / 4) + mi * 16 + g + h * 8) >> 1;"]:
        assert line in SRC, line
    spec = (ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml").read_text()
    assert 'shared_bytes: "STAGES * (128 * BW + 304 * BN + 2304)"' in spec  # = stages x STAGE in emulate


# ragged: C_in = 1 / 3 / 20 / 40 (chunk tails; 40 = 5 float32 chunks, more than 3 stages), C_out = 7 / 70
# (tile tails), odd H/W, W > BW / 2 pooled columns (two column tiles), H = W = 2
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 8, 5, 7), (1, 20, 70, 4, 70), (1, 40, 24, 3, 16)]


@pytest.mark.parametrize("ES", [4, 2], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("BW,BN,STAGES", [(64, 128, 2), (128, 128, 3)])
def test_v5_index_math_matches_conv_relu_maxpool(ES, BW, BN, STAGES):
    rng = np.random.default_rng(BW + BN + ES)
    for N, C, K, H, W in SHAPES:
        x = rng.standard_normal((N, C, H, W))
        w = rng.standard_normal((K, C, 3, 3))
        b = rng.standard_normal(K)
        ref = reference(x, w, b)
        for vec_ok in ([True, False] if (W % (16 // ES) == 0 or C % (32 // ES) == 0) else [False]):
            got, conflict_free = emulate(x, w, b, ES, BW, BN, vec_ok=vec_ok, stages=STAGES)
            assert not np.isnan(got).any(), ((N, C, K, H, W), vec_ok, "unwritten output or unwritten smem read")
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10, err_msg=str(((N, C, K, H, W), vec_ok)))
            assert conflict_free, "a fragment load has a shared-memory bank conflict"


def test_emulation_catches_a_stage_overwritten_too_early_and_a_conflicting_stride():
    """The checks can fail: copying two chunks ahead into two buffers overwrites the chunk being
    read; an unpadded channel stride makes the loads conflict."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((1, 40, 4, 8)), rng.standard_normal((8, 40, 3, 3)), rng.standard_normal(8)
    ref = reference(x, w, b)
    got, ok = emulate(x, w, b, 4, 64, 64)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    assert ok
    got, _ = emulate(x, w, b, 4, 64, 64, stages=2, ahead=2)
    assert not np.allclose(got, ref, rtol=1e-6, atol=1e-6)
    got, ok = emulate(x, w, b, 4, 64, 64, chan_pad=0)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    assert not ok
