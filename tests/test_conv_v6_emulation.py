"""CPU emulation of conv_relu_maxpool v6 (specs/conv_relu_maxpool/kernels/v6_wgmma.cu).

No GPU runs here (and no wgmma: it needs sm_90a), so this file re-runs v6's index math in NumPy --
the same one-dimensional grid, the same STAGES-buffer rotation, the same staging (16-byte cp.async
path and element path) into the raw input tile and into the weight tile's core-matrix slots, the
same 64-bit matrix descriptors (encoded as the kernel does, decoded by the PTX ISA's bit fields:
start address bits 0-13, leading-dimension byte offset bits 16-29, stride-dimension byte offset
bits 32-45, all in 16-byte units), the same per-lane A-fragment offsets, the same epilogue shuffle
and stores -- and checks the result against F.conv2d -> ReLU -> MaxPool2d on ragged shapes.

The wgmma semantics are written here from the PTX ISA, independently of the kernel:
  - B (K x N) from a no-swizzle K-major descriptor: element (k, n) at byte start + (n // 8) * SBO +
    (n % 8) * 16 + (k * ES // 16) * LBO + (k * ES) % 16 (core matrices of 8 rows x 16 bytes; LBO
    between core matrices adjacent in K, SBO between those adjacent in N);
  - A (64 x K) in registers: warp w of the warpgroup holds rows 16w .. 16w + 15 with mma.sync's
    m16n8k8 (.tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)) or m16n8k16
    (.bf16: pairs at columns 2t, 2t + 1 and 2t + 8, 2t + 9) layout, g = lane / 4, t = lane % 4;
  - D (64 x N, float32): register i of lane (g, t) in warp w is row 16w + g + 8 ((i / 2) % 2),
    column 8 (i / 4) + 2t + i % 2.
Shared memory starts as NaN, and a stage buffer keeps the previous chunk's values until it is
rewritten, so a read of an unwritten byte or of the wrong stage changes the output. It also
checks that every A-fragment load of a warp is free of bank conflicts. Arithmetic is float64: the
layout is what is tested; rounding is checked on the GPU (bench/conv_v6_probe.py).
"""

import re
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from test_conv_tc_emulation import ROOT, cdiv, reference
from test_conv_v5_emulation import banks_ok

SRC = (ROOT / "specs" / "conv_relu_maxpool" / "kernels" / "v6_wgmma.cu").read_text()


def koff(k, CS, SWS):
    """Offset (elements) in the staged input tile of chunk-local K index k = c * 9 + kh * 3 + kw."""
    c, r = k // 9, k % 9
    return c * CS + (r // 3) * SWS + r % 3


def emulate(x, w, b, ES, BW, BN, STAGES, vec_ok=True, desc_swap=False, ahead=None, tap_major=False):
    """Run v6's grid on float64 arrays as if the element size were ES bytes (4: float32 as TF32,
    2: bfloat16). vec_ok=False forces the element staging paths. desc_swap, ahead and tap_major
    exist to show the checks can fail: the descriptor's two strides exchanged, copying as far
    ahead as there are buffers (a chunk overwritten before it is read), or the A offsets in v5's
    tap-major K order while the weights stay in OIHW order. Returns (y, conflict_free)."""
    N, C, H, W = x.shape
    K = w.shape[0]
    PH, PW = H // 2, W // 2
    VEC, CK = 16 // ES, 32 // ES
    KC, KSTEP = CK * 9, 32 // ES
    SWC = BW + 2 * VEC
    SCH = SWC // VEC
    SWS = SWC + (4 if ES == 4 else 0)
    CS = 4 * SWS
    XST = 128 * BW + 2048
    assert CK * CS * ES <= XST
    WPIECES, CORE = KC * ES // 16, 128
    LBO, SBO = CORE, WPIECES * CORE
    WST = BN * KC * ES
    STAGE = XST + WST
    THREADS = 2 * BW
    WGS = BW // 64
    NACC = BN // 2
    KA = 4 // ES
    ahead = STAGES - 1 if ahead is None else ahead
    xf, wf = x.reshape(-1), w.reshape(-1)
    x_vec = vec_ok and W % VEC == 0
    w_vec = vec_ok and C % CK == 0
    y = np.full((N, K, PH, PW), np.nan)
    nchunks = cdiv(C, CK)

    tid = np.arange(THREADS)
    lane, warp = tid & 31, tid >> 5
    wg, wq = warp >> 2, warp & 3
    g, t = lane >> 2, lane & 3
    a_base = 64 * wg + 16 * wq + g + VEC - 1
    # the kernel's aoff[s][j]: K index KSTEP s + KA t + (j / KA) KSTEP / 2 + j % KA
    aoff = np.zeros((9, 2 * KA, THREADS), dtype=np.int64)
    for s in range(9):
        for j in range(2 * KA):
            k = KSTEP * s + KA * t + (j // KA) * (KSTEP // 2) + (j % KA)
            if tap_major:  # v5's order: k = tap * CK + c
                kt = k
                k = (kt % CK) * 9 + kt // CK
                aoff[s, j] = koff(k, CS, SWS) + a_base
            else:
                aoff[s, j] = koff(k, CS, SWS) + a_base

    # PTX fragment tables (row, K column) of A register j, element e; (row, column) of D register i
    e = np.arange(KA)
    a_row = np.stack([g, g + 8, g, g + 8], axis=1)[:, :, None] + 0 * e           # (THREADS, 4, KA)
    a_col = (KA * t[:, None, None] + (np.arange(4)[None, :, None] >> 1) * 4 * KA) + e
    i = np.arange(NACC)
    d_row = 16 * wq[:, None] + g[:, None] + 8 * ((i[None, :] >> 1) & 1)           # (THREADS, NACC)
    d_col = 8 * (i[None, :] >> 2) + 2 * t[:, None] + (i[None, :] & 1)

    def desc_of(addr):
        lead, stride = (SBO, LBO) if desc_swap else (LBO, SBO)
        return ((addr & 0x3FFFF) >> 4) | ((lead >> 4) << 16) | ((stride >> 4) << 32)

    def b_tile(smem, desc, lo, hi):
        """B (KSTEP x BN) as wgmma reads it through the no-swizzle K-major descriptor."""
        start, lbo, sbo = (desc & 0x3FFF) << 4, ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4
        kk, nn = np.arange(KSTEP)[:, None], np.arange(BN)[None, :]
        byte = start + (nn // 8) * sbo + (nn % 8) * 16 + (kk * ES // 16) * lbo + (kk * ES) % 16
        assert byte.min() >= lo and byte.max() + ES <= hi, "descriptor read outside its stage's weight tile"
        assert np.all(byte % ES == 0)
        return smem[byte // ES]

    conflict_free = True
    ctiles = cdiv(PW, BW // 2)
    ktiles = cdiv(K, BN)
    grid = ctiles * PH * N * ktiles
    assert grid < 2 ** 31
    for bid in range(grid):
        ow0 = (bid % ctiles) * BW
        ph = (bid // ctiles) % PH
        bz = bid // (ctiles * PH)
        n, k0 = bz // ktiles, (bz % ktiles) * BN
        ih0, gc0 = 2 * ph - 1, ow0 - VEC
        xn_off = n * C * H * W
        smem = np.full(STAGES * STAGE // ES, np.nan)  # element-indexed; byte address = index * ES

        def stage(chunk, s):
            c0 = chunk * CK
            xs, ws = s * STAGE // ES, (s * STAGE + XST) // ES
            ee = np.arange(VEC)
            q = np.arange(CK * 4 * SCH)
            sc, r, c = q % SCH, (q // SCH) % 4, q // (4 * SCH)
            ih, cc, gcol = ih0 + r, c0 + c, gc0 + sc * VEC
            dst = xs + c * CS + r * SWS + sc * VEC
            assert (dst + VEC).max() <= xs + XST // ES
            row_in = (cc < C) & (ih >= 0) & (ih < H)
            col = gcol[:, None] + ee
            if x_vec:
                ok = np.broadcast_to((row_in & (gcol >= 0) & (gcol + VEC <= W))[:, None], col.shape)
            else:
                ok = row_in[:, None] & (col >= 0) & (col < W)
            src = xn_off + (cc[:, None] * H + ih[:, None]) * W + col
            smem[dst[:, None] + ee] = np.where(ok, xf[np.where(ok, src, 0)], 0.0)
            q = np.arange(BN * WPIECES)
            r8, p = q % 8, (q // 8) % WPIECES
            nn = (q // (8 * WPIECES)) * 8 + r8
            kk = k0 + nn
            dst = ws + q * 16 // ES                      # the copy index is the 16-byte slot
            assert (dst + VEC).max() <= ws + WST // ES
            base = (kk * C + c0) * 9 + p * VEC
            f = p[:, None] * VEC + ee
            if w_vec:
                ok = np.broadcast_to((kk < K)[:, None], f.shape)
            else:
                ok = (kk[:, None] < K) & (c0 * 9 + f < C * 9)
            src = base[:, None] + ee
            smem[dst[:, None] + ee] = np.where(ok, wf[np.where(ok, src, 0)], 0.0)

        acc = np.zeros((2, THREADS, NACC))
        for s in range(ahead):
            if s < nchunks:
                stage(s, s % STAGES)
        for ci in range(nchunks):
            if ci + ahead < nchunks:
                stage(ci + ahead, (ci + ahead) % STAGES)  # copies may land at once: the worst case
            xs0 = (ci % STAGES) * STAGE // ES
            wbase = (ci % STAGES) * STAGE + XST           # bytes
            for s in range(9):
                B = b_tile(smem, desc_of(wbase + s * 2 * LBO), wbase, wbase + WST)
                for rr in range(2):
                    p = xs0 + rr * SWS
                    regs = np.zeros((THREADS, 4, KA))
                    for h in range(2):
                        for hi in range(2):                # a0/a2 (pixel g) and a1/a3 (pixel g + 8)
                            for el in range(KA):
                                idx = p + aoff[s, h * KA + el] + 8 * hi
                                assert idx.min() >= xs0 and idx.max() < xs0 + XST // ES, "A read outside its tile"
                                for wgi in range(THREADS // 32):
                                    conflict_free &= banks_ok(idx[wgi * 32:(wgi + 1) * 32], ES)
                                regs[:, 2 * h + hi, el] = smem[idx]
                    for wgi in range(WGS):
                        sel = slice(128 * wgi, 128 * (wgi + 1))
                        A = np.full((64, KSTEP), np.nan)
                        rows = a_row[sel] + 16 * wq[sel][:, None, None]
                        A[rows, a_col[sel]] = regs[sel]
                        assert not np.isnan(A).any() or np.isnan(regs[sel]).any(), "A fragment layout leaves a hole"
                        D = A @ B                                  # 64 x BN
                        acc[rr, sel] += D[d_row[sel], d_col[sel]]
        v = np.maximum(acc[0], acc[1])
        v = np.maximum(v, v[tid ^ 4])                     # __shfl_xor_sync(v, 4): lanes l, l ^ 4
        k = k0 + d_col                                    # (THREADS, NACC)
        pw = (ow0 + 64 * wg[:, None] + 16 * wq[:, None] + g[:, None] + 8 * ((i[None, :] >> 1) & 1)) >> 1
        ok = ((g[:, None] & 1) == 0) & (k < K) & (pw < PW)
        kk, pp, vv = k[ok], pw[ok], v[ok]
        assert np.all(np.isnan(y[n, kk, ph, pp])), "one store per pooled output"
        y[n, kk, ph, pp] = np.maximum(vv + b[kk], 0.0)
    return y, conflict_free


def test_emulation_constants_match_the_kernel_source():
    """The emulator's layout constants and index formulas are the kernel's."""
    for line in ["constexpr int CK = 32 / ES;", "constexpr int KC = CK * 9;", "constexpr int KSTEP = 32 / ES;",
                 "constexpr int SWC = BW + 2 * VEC;", "constexpr int SWS = SWC + (ES == 4 ? 4 : 0);",
                 "constexpr int CS = 4 * SWS;", "constexpr int XST = 128 * BW + 2048;",
                 "constexpr int LBO = CORE;", "constexpr int SBO = WPIECES * CORE;",
                 "constexpr int WST = BN * KC * ES;", "constexpr int STAGE_BYTES = XST + WST;",
                 "#define THREADS (2 * BW)",
                 "return (unsigned long long)((addr & 0x3FFFF) >> 4) | (lead << 16) | (stride << 32);",
                 "return c * CS + kh * SWS + (r - 3 * kh);",
                 "const int a_base = 64 * wg + 16 * wq + g + VEC - 1;",
                 "aoff[s][j] = koff(KSTEP * s + KA * t + (j / KA) * (KSTEP / 2) + (j % KA)) + a_base;",
                 "const unsigned long long desc = wgmma_desc(wbase + s * 2 * LBO);",
                 "const raw_t* p = xs + rr * SWS;",
                 "af[rr][2 * h + 1] = tf32_rna(p[aoff[s][h] + 8]);",
                 "const int r8 = q % 8, p = (q / 8) % WPIECES, nn = (q / (8 * WPIECES)) * 8 + r8, kk = k0 + nn;",
                 "unsigned char* dst = ws + q * 16;",
                 "unsigned char* dst = xs + (c * CS + r * SWS + sc * VEC) * ES;",
                 "if (i + STAGES - 1 < nchunks) stage(i + STAGES - 1, (i + STAGES - 1) % STAGES);",
                 "const int k = k0 + 8 * (i >> 2) + 2 * t + (i & 1);",
                 "const int pw = (ow0 + 64 * wg + 16 * wq + g + 8 * ((i >> 1) & 1)) >> 1;",
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32",
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"]:
        assert line in SRC, line
    spec = (ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml").read_text()
    assert 'shared_bytes: "STAGES * (128 * BW + 288 * BN + 2048)"' in spec  # = STAGES x STAGE in emulate
    assert 'block: ["2 * BW", 1, 1]' in spec and "arch_specific: true" in spec


# ragged: C_in = 1 / 3 / 40 (chunk tails; 40 float32 channels = 5 chunks, more than 3 stages) and
# 24 (a 16-byte multiple in float32 only), C_out = 7 / 70 / 130 (tile tails, two BN = 64 or 128
# tiles), odd H / W, W = 132 (two BW = 128 column tiles), H = W = 2
SHAPES = [(1, 1, 1, 2, 2), (2, 3, 7, 5, 7), (1, 40, 70, 3, 16), (1, 24, 130, 2, 132)]


@pytest.mark.parametrize("ES", [4, 2], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("BW,BN,STAGES", [(128, 64, 2), (128, 128, 3), (64, 128, 2)])
def test_v6_index_math_matches_conv_relu_maxpool(ES, BW, BN, STAGES):
    rng = np.random.default_rng(BW + BN + ES + STAGES)
    for N, C, K, H, W in SHAPES:
        x = rng.standard_normal((N, C, H, W))
        w = rng.standard_normal((K, C, 3, 3))
        b = rng.standard_normal(K)
        ref = reference(x, w, b)
        vec_cases = [True, False] if (W % (16 // ES) == 0 or C % (32 // ES) == 0) else [False]
        for vec_ok in vec_cases:
            got, conflict_free = emulate(x, w, b, ES, BW, BN, STAGES, vec_ok=vec_ok)
            assert not np.isnan(got).any(), ((N, C, K, H, W), vec_ok, "unwritten output or unwritten smem read")
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10, err_msg=str(((N, C, K, H, W), vec_ok)))
            assert conflict_free, "an A-fragment load has a shared-memory bank conflict"


def test_emulation_catches_swapped_strides_an_early_overwrite_and_a_wrong_k_order():
    """The checks can fail: the descriptor's LBO and SBO exchanged read other weights (or leave
    the tile); two chunks ahead in two buffers overwrite the chunk being read; the A offsets in
    v5's tap-major order disagree with the weights' OIHW order."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((1, 40, 4, 8)), rng.standard_normal((16, 40, 3, 3)), rng.standard_normal(16)
    ref = reference(x, w, b)
    got, ok = emulate(x, w, b, 4, 128, 64, 3)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    assert ok
    try:
        got, _ = emulate(x, w, b, 4, 128, 64, 3, desc_swap=True)
        assert not np.allclose(got, ref, rtol=1e-6, atol=1e-6)
    except AssertionError as e:
        assert "outside" in str(e)
    got, _ = emulate(x, w, b, 4, 128, 64, 2, ahead=2)
    assert not np.allclose(got, ref, rtol=1e-6, atol=1e-6)
    got, _ = emulate(x, w, b, 4, 128, 64, 3, tap_major=True)
    assert not np.allclose(got, ref, rtol=1e-6, atol=1e-6)


def test_unpadded_row_stride_would_conflict():
    """The float32 row stride's 4-word pad is what makes the lane-dependent A loads conflict-free:
    with SWS = SWC (v5's stride) some loads of a warp hit one bank at two words."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    SWC = 128 + 8
    for SWS, want in ((SWC, False), (SWC + 4, True)):
        ok = True
        for s in range(9):
            for kk in (8 * s + t, 8 * s + t + 4):
                for h in (0, 8):
                    ok &= banks_ok(np.array([koff(k, 4 * SWS, SWS) for k in kk]) + g + h + 3, 4)
        assert ok == want, SWS


def _v6_builds():
    from kernelsynth.backends.cuda import defines, kernel_arch
    from kernelsynth.spec import load_spec

    spec = load_spec(ROOT / "specs" / "conv_relu_maxpool" / "spec.yaml", task_folder=True)
    v6 = next(c for c in spec.candidates if c.version == "v6")
    return v6, [(dt, cfg, defines(dt, cfg), kernel_arch("sm_90", v6.launch)) for dt in spec.dtypes for cfg in v6.configs()]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
def test_v6_compiles_for_sm90a_without_local_memory_or_serialized_wgmma(nvcc_cubin):
    """Both dtypes x both tiles (STAGES = 3; tests/test_tasks.py compiles every config) build for
    sm_90a (the launch block's arch_specific), with no spill or stack (local memory) and without
    ptxas's advisory that it serialized the wgmma pipeline; and sm_90 (no arch-specific features)
    refuses the wgmma instructions."""
    v6, builds = _v6_builds()
    assert len(builds) == 8 and {b[3] for b in builds} == {"sm_90a"}
    builds = [b for b in builds if b[1]["STAGES"] == 3]

    def nvcc(build, arch=None):
        dt, cfg, macros, a = build
        return ((dt, cfg), *nvcc_cubin(arch or a, macros, v6.file, timeout=120))  # tests/conftest.py: once a session

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(nvcc, builds))
    for label, rc, err in results:
        assert rc == 0, (label, err[-3000:])
        assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in err, (label, err)
        assert "Performance Loss" not in err and "serialized" not in err, (label, err)
        regs = int(re.search(r"Used (\d+) registers", err).group(1))
        assert regs <= (128 if label[1]["BN"] == 64 else 255), (label, regs)  # BN = 64: two blocks of 256 threads per SM
    label, rc, err = nvcc(builds[0], arch="sm_90")
    assert rc != 0 and "wgmma" in err, err[-2000:]
