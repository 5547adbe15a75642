"""CPU emulation of conv_relu_maxpool v4 (specs/conv_relu_maxpool/kernels/v4_tensor_core.cu).

No GPU runs here, so this file re-runs the kernel's index math in NumPy -- the same grid, the
same staging (both the 16-byte cp.async path and the element path), the same transposition into
operand tiles, the same ldmatrix row addresses and mma.sync fragments, the same epilogue shuffle
-- and checks the result against F.conv2d -> ReLU -> MaxPool2d on ragged shapes. The ldmatrix
and mma.sync semantics are written independently from the PTX ISA's fragment tables (m8n8.x4
.b16 loads; m16n8k8 .tf32 and m16n8k16 .bf16 with float32 accumulators), so a wrong address,
layout or lane mapping in the kernel changes the output. Shared memory starts as NaN: a read of a
byte the kernel never wrote poisons the result. Arithmetic is float64 (operand rounding is the
hardware's business and is checked on the GPU by the precision rule); the layout is what is tested.
"""

import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
SRC = (ROOT / "specs" / "conv_relu_maxpool" / "kernels" / "v4_tensor_core.cu").read_text()


def cdiv(a, b):
    return -(-a // b)


def emulate(x, w, b, ES, BW, BN, vec_ok=True, shfl=4, a_swap=False):
    """Run v4's grid on float64 arrays as if the element size were ES bytes (4: float32, 2:
    bfloat16). vec_ok=False forces the element staging path (the kernel takes it when W or C_in
    is not a multiple of 16 bytes). shfl and a_swap exist to show the check can fail: another
    shuffle partner, or the A operand's ldmatrix matrices 1 and 2 exchanged."""
    N, C, H, W = x.shape
    K = w.shape[0]
    PH, PW = H // 2, W // 2
    VEC, CK = 16 // ES, 32 // ES
    SWC, XCOLS, PIX, WROW = BW + 2 * VEC, BW + 2, 48, 304
    SCH, MI, NI = SWC // VEC, BW // 64, BN // 16
    XR_OFF = 0
    WR_OFF = XR_OFF + 128 * BW + 2048
    XS_OFF = WR_OFF + WROW * BN
    WS_OFF = XS_OFF + 4 * XCOLS * PIX
    SMEM = WS_OFF + 9 * BN * PIX
    assert SMEM == 320 * BW + 736 * BN + 2432
    EPW = 4 // ES  # elements per 32-bit register
    KK = 8 * EPW  # mma k
    xf, wf = x.reshape(-1), w.reshape(-1)
    x_vec = vec_ok and W % VEC == 0
    w_vec = vec_ok and C % CK == 0
    y = np.full((N, K, PH, PW), np.nan)

    lane = np.arange(32)
    warp = np.arange(8)[:, None]
    wm, wn = warp & 3, warp >> 2
    lj, li = lane >> 3, lane & 7
    a_pix, a_half = ((lj >> 1), (lj & 1)) if a_swap else ((lj & 1), (lj >> 1))
    a_base = XS_OFF + (wm * (BW // 4) + a_pix * 8 + li) * PIX + a_half * 16  # (8, 32) bytes
    b_base = WS_OFF + (wn * (BN // 2) + (lj >> 1) * 8 + li) * PIX + (lj & 1) * 16
    g, t = lane >> 2, lane & 3

    def ldmatrix_x4(smem, addr):
        """m8n8.x4.b16: lanes 8j..8j+7 give the row addresses of matrix j; register j of lane L
        holds row L // 4 of matrix j, 32-bit word L % 4. Returns (8 warps, 32 lanes, 4 regs, EPW)."""
        assert np.all(addr % 16 == 0), "ldmatrix rows must be 16-byte aligned"
        rows = addr.reshape(8, 4, 8)  # warp, matrix j, row i
        word = rows[:, :, lane // 4] + (lane % 4) * 4  # (8, 4, 32) byte address of lane L's word
        el = word[..., None] // ES + np.arange(EPW)
        return smem[el].transpose(0, 2, 1, 3)  # (8, 32, 4, EPW)

    # fragment tables (PTX ISA, mma.m16n8k8 .tf32 / mma.m16n8k16 .bf16, float32 C/D)
    e = np.arange(EPW)
    a_row = (g[:, None, None] + 8 * (np.arange(4)[None, :, None] & 1)) + 0 * e  # (32, 4, EPW)
    a_col = EPW * t[:, None, None] + e + (np.arange(4)[None, :, None] >> 1) * 4 * EPW
    b_row = EPW * t[:, None, None] + e + np.arange(2)[None, :, None] * 4 * EPW  # k, (32, 2, EPW)
    b_col = g[:, None, None] + 0 * b_row  # n
    c_row = g[:, None] + 8 * (np.arange(4)[None, :] >> 1)  # (32, 4)
    c_col = 2 * t[:, None] + (np.arange(4)[None, :] & 1)

    def mma(acc, af, bf):
        """acc (8, 32, 4) += A (16 x KK) @ B (KK x 8) built from the lanes' fragments."""
        A = np.zeros((8, 16, KK))
        B = np.zeros((8, KK, 8))
        A[:, a_row, a_col] = af
        B[:, b_row, b_col] = bf
        D = A @ B
        acc += D[:, c_row, c_col]

    grid = (cdiv(PW, BW // 2), PH, N * cdiv(K, BN))
    for bz in range(grid[2]):
        ktiles = cdiv(K, BN)
        n, k0 = bz // ktiles, (bz % ktiles) * BN
        xn_off = n * C * H * W
        for by in range(grid[1]):
            for bx in range(grid[0]):
                ow0, ph = bx * BW, by
                ih0, gc0 = 2 * ph - 1, ow0 - VEC
                smem = np.full(SMEM // ES, np.nan)

                def stage(c0):
                    q = np.arange(CK * 4 * SCH)
                    sc, r, c = q % SCH, (q // SCH) % 4, q // (4 * SCH)
                    ih, cc, gcol = ih0 + r, c0 + c, gc0 + sc * VEC
                    dst = (XR_OFF + ((c * 4 + r) * SWC + sc * VEC) * ES) // ES
                    row_in = (cc < C) & (ih >= 0) & (ih < H)
                    ee = np.arange(VEC)
                    col = gcol[:, None] + ee
                    if x_vec:
                        inn = row_in & (gcol >= 0) & (gcol + VEC <= W)
                        ok = np.broadcast_to(inn[:, None], col.shape)
                    else:
                        ok = row_in[:, None] & (col >= 0) & (col < W)
                    src = xn_off + (cc[:, None] * H + ih[:, None]) * W + col
                    smem[dst[:, None] + ee] = np.where(ok, xf[np.where(ok, src, 0)], 0.0)
                    q = np.arange(BN * 18)
                    nn, p = q // 18, q % 18
                    kk = k0 + nn
                    dst = (WR_OFF + nn * WROW + p * 16) // ES
                    base = (kk * C + c0) * 9 + p * VEC
                    f = p[:, None] * VEC + ee
                    if w_vec:
                        ok = np.broadcast_to((kk < K)[:, None], f.shape)
                    else:
                        ok = (kk[:, None] < K) & (c0 * 9 + f < C * 9)
                    src = base[:, None] + ee
                    smem[dst[:, None] + ee] = np.where(ok, wf[np.where(ok, src, 0)], 0.0)

                def transpose():
                    q = np.arange(4 * XCOLS * 2)
                    j, h, r = q % XCOLS, (q // XCOLS) & 1, q // (2 * XCOLS)
                    s = j - 1 + VEC
                    ee = np.arange(VEC)
                    v = smem[XR_OFF // ES + ((h[:, None] * VEC + ee) * 4 + r[:, None]) * SWC + s[:, None]]
                    smem[((XS_OFF + (r * XCOLS + j) * PIX + h * 16) // ES)[:, None] + ee] = v
                    q = np.arange(24 * BN)
                    nlo, xq, h, rest = q & 7, (q >> 3) & 3, (q >> 5) & 1, q >> 6
                    tap, nn = (rest % 3) * 4 + xq, (rest // 3) * 8 + nlo
                    keep = tap < 9
                    tap, nn, h = tap[keep], nn[keep], h[keep]
                    v = smem[(WR_OFF + nn[:, None] * WROW) // ES + (h[:, None] * VEC + ee) * 9 + tap[:, None]]
                    smem[((WS_OFF + (tap * BN + nn) * PIX + h * 16) // ES)[:, None] + ee] = v

                acc = np.zeros((2, MI, NI, 8, 32, 4))
                stage(0)
                for c0 in range(0, C, CK):
                    transpose()
                    if c0 + CK < C:
                        stage(c0 + CK)  # the kernel's copy overlaps the MMAs; they read other buffers
                    for tap in range(9):
                        kh, kw = tap // 3, tap % 3
                        bf = [None] * NI
                        for npair in range(NI // 2):
                            regs = ldmatrix_x4(smem, b_base + (tap * BN + npair * 16) * PIX)
                            bf[2 * npair], bf[2 * npair + 1] = regs[:, :, 0:2], regs[:, :, 2:4]
                        for rr in range(2):
                            for mi in range(MI):
                                af = ldmatrix_x4(smem, a_base + ((rr + kh) * XCOLS + mi * 16 + kw) * PIX)
                                for ni in range(NI):
                                    mma(acc[rr, mi, ni], af, bf[ni])
                v = np.maximum(acc[0], acc[1])  # (MI, NI, 8, 32, 4)
                v = np.maximum(v, v[:, :, :, lane ^ shfl])  # __shfl_xor_sync(v, 4)
                for mi in range(MI):
                    for ni in range(NI):
                        for q in range(4):
                            pw = (ow0 + wm * (BW // 4) + mi * 16 + g + (q >> 1) * 8) >> 1  # (8, 32)
                            k = k0 + wn * (BN // 2) + ni * 8 + 2 * t + (q & 1)
                            ok = ((g & 1) == 0) & (pw < PW) & (k < K)
                            kk, pp = np.broadcast_to(k, ok.shape)[ok], np.broadcast_to(pw, ok.shape)[ok]
                            assert np.all(np.isnan(y[n, kk, ph, pp])), "one store per pooled output"
                            y[n, kk, ph, pp] = np.maximum(v[mi, ni, :, :, q][ok] + b[kk], 0.0)
    return y


def reference(x, w, b):
    out = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), padding=1)
    return F.max_pool2d(F.relu(out), 2).numpy()


def test_emulation_constants_match_the_kernel_source():
    """The emulator's layout constants are the kernel's (a change to one must reach the other)."""
    for line in ["constexpr int PIX = 48;", "constexpr int WROW = 304;", "constexpr int CK = 32 / ES;",
                 "constexpr int SWC = BW + 2 * VEC;", "constexpr int XCOLS = BW + 2;",
                 "constexpr int WR_OFF = XR_OFF + 128 * BW + 2048;", "constexpr int MI = BW / 64;",
                 "constexpr int NI = BN / 16;", "const int s = j - 1 + VEC;",
                 "const int tap = (rest % 3) * 4 + xq, nn = (rest / 3) * 8 + nlo;",
                 "const int nlo = q & 7, xq = (q >> 3) & 3, h = (q >> 5) & 1, rest = q >> 6;"]:
        assert line in SRC, line
    spec = (ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml").read_text()
    assert re.search(r'shared_bytes: "320 \* BW \+ 736 \* BN \+ 2432"', spec)
    assert 'grid: ["cdiv(PW, BW // 2) * PH * N * cdiv(C_out, BN)", 1, 1]' in spec  # one-dimensional since session 11


# ragged on purpose: odd H/W, C_in = 1 / 3 / 5 / 20 (chunk tails), C_out = 7 / 70 (tile tails),
# W > BW / 2 pooled columns (two column tiles), H = W = 2 (one pooled output)
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 8, 5, 7), (1, 5, 7, 9, 6), (1, 20, 70, 4, 70), (1, 16, 24, 3, 16)]


@pytest.mark.parametrize("ES", [4, 2], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("BW,BN", [(64, 64), (128, 64), (64, 128), (128, 128)])
def test_v4_index_math_matches_conv_relu_maxpool(ES, BW, BN):
    rng = np.random.default_rng(BW + BN + ES)
    shapes = SHAPES if (BW, BN) == (64, 64) else SHAPES[1:4]
    for N, C, K, H, W in shapes:
        x = rng.standard_normal((N, C, H, W))
        w = rng.standard_normal((K, C, 3, 3))
        b = rng.standard_normal(K)
        ref = reference(x, w, b)
        for vec_ok in ([True, False] if (W % (16 // ES) == 0 or C % (32 // ES) == 0) else [False]):
            got = emulate(x, w, b, ES, BW, BN, vec_ok=vec_ok)
            assert got.shape == ref.shape
            assert not np.isnan(got).any(), ((N, C, K, H, W), vec_ok, "unwritten output or uninitialised smem read")
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10, err_msg=str(((N, C, K, H, W), vec_ok)))


def test_emulation_catches_a_wrong_fragment_layout():
    """The check can fail: a wrong epilogue shuffle partner (lane ^ 8) or the A operand's ldmatrix
    matrices exchanged (pixels 8-15 read where channels 4-7 belong) no longer match the reference."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((1, 8, 4, 8)), rng.standard_normal((8, 8, 3, 3)), rng.standard_normal(8)
    ref = reference(x, w, b)
    np.testing.assert_allclose(emulate(x, w, b, 4, 64, 64), ref, rtol=1e-10, atol=1e-10)
    assert not np.allclose(emulate(x, w, b, 4, 64, 64, shfl=8), ref, rtol=1e-6, atol=1e-6)
    assert not np.allclose(emulate(x, w, b, 4, 64, 64, a_swap=True), ref, rtol=1e-6, atol=1e-6)
