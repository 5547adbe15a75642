// conv_relu_maxpool v4: tensor-core implicit GEMM (mma.sync) with cp.async staging and a pooling epilogue.
//
// The convolution is a GEMM: M = conv output pixels, N = output channels, K = C_in x 9 taps.
// A block owns one pooled row ph of one image (conv rows 2ph and 2ph+1), BW conv columns and BN
// output channels; 8 warps split it 4 (columns) x 2 (channels), so a warp holds 2 rows x BW/4
// columns x BN/2 channels of float32 accumulators. K is walked in chunks of 32 bytes of input
// channels (8 float32 or 16 bfloat16 channels) times the 9 taps, one MMA k-step per tap:
//
//   1. cp.async (16-byte, zero-filled outside the image / channel range) copies the chunk's raw
//      NCHW input rows 2ph-1 .. 2ph+2 (with the halo columns) and the block's raw weights
//      w[k][c0:c0+CK][3][3] into staging buffers; it is issued before the previous chunk's MMAs,
//      so the copy of chunk i+1 overlaps the tensor-core work of chunk i (staging + operand
//      buffers: two stages). Shapes whose rows are not 16-byte multiples (odd W, C_in % CK != 0)
//      take an element path that fills the same staging layout with zeros for the tails.
//   2. One shared-memory pass transposes the staged tiles into MMA operand layouts: input as
//      [row][column][channel] (channels innermost, 32 bytes + 16 pad per pixel), weights as
//      [tap][out channel][channel]; float32 values are rounded to TF32 (cvt.rna) on the way.
//   3. Per tap, ldmatrix.x4 loads A fragments (16 pixels x one k-step) at the tap's (kh, kw)
//      shift and B fragments (16 channels), then mma.sync m16n8k8 TF32 (float32) or m16n8k16
//      bfloat16/float16, float32 accumulation.
//
// Epilogue in registers: the two conv rows of a pooling window sit in the same thread (two
// accumulator tiles), the two columns in lanes l and l ^ 4 (one shuffle); add the bias, ReLU,
// and one store per pooled output. No conv or ReLU map reaches DRAM.
//
// Compiled at run time by NVRTC. KS_T is the element type (float, __nv_bfloat16 or __half); BW
// (conv columns per block: 64 or 128) and BN (output channels per block: 64 or 128) are
// tunables. Dynamic shared memory: 320 * BW + 736 * BN + 2432 bytes (spec.yaml's shared_bytes).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BW
#define BW 128
#endif
#ifndef BN
#define BN 64
#endif
#define THREADS 256

template <typename A, typename B> struct ks_same { static constexpr bool value = false; };
template <typename A> struct ks_same<A, A> { static constexpr bool value = true; };
template <int S> struct ks_raw;
template <> struct ks_raw<4> { typedef unsigned int type; };
template <> struct ks_raw<2> { typedef unsigned short type; };

constexpr int ES = sizeof(KS_T);            // element bytes
static_assert(ES == 4 || ES == 2, "v4 supports float32, bfloat16 and float16");
typedef ks_raw<ES>::type raw_t;
constexpr int VEC = 16 / ES;                // elements per 16-byte copy
constexpr int CK = 32 / ES;                 // input channels per chunk (one MMA k-step per tap)
constexpr int SWC = BW + 2 * VEC;           // staged columns per input row: ow0-VEC .. ow0+BW+VEC-1
constexpr int SCH = SWC / VEC;              // 16-byte copies per staged input row
constexpr int XCOLS = BW + 2;               // transposed columns: ow0-1 .. ow0+BW
constexpr int PIX = 48;                     // bytes per transposed pixel / weight row (32 + 16 pad)
constexpr int WROW = 304;                   // bytes per staged weight row (CK * 9 * ES = 288, + 16 pad)
constexpr int MI = BW / 64;                 // m16 tiles per warp per conv row
constexpr int NI = BN / 16;                 // n8 tiles per warp
// shared memory carve-up (bytes; offsets are 16-byte aligned and the same for every dtype)
constexpr int XR_OFF = 0;                               // staged input  [CK][4][SWC] raw
constexpr int WR_OFF = XR_OFF + 128 * BW + 2048;        // staged weights [BN][WROW] raw
constexpr int XS_OFF = WR_OFF + WROW * BN;              // A operand [4][XCOLS][PIX]
constexpr int WS_OFF = XS_OFF + 4 * XCOLS * PIX;        // B operand [9][BN][PIX]
constexpr int SMEM_BYTES = WS_OFF + 9 * BN * PIX;       // = 320 * BW + 736 * BN + 2432
static_assert(SMEM_BYTES == 320 * BW + 736 * BN + 2432, "spec.yaml shared_bytes formula");
// blocks per SM to ask registers for: what 228 KiB of shared memory (1 KiB reserved per block)
// admits, at most 3 (32 accumulators per thread), 2 (64) or 1 (128)
constexpr int MINB_SMEM = 233472 / (SMEM_BYTES + 1024);
constexpr int MINB_REGS = (8 * MI * NI <= 32) ? 3 : (8 * MI * NI <= 64) ? 2 : 1;
constexpr int MINB = MINB_SMEM < MINB_REGS ? MINB_SMEM : MINB_REGS;
static_assert(CK * 4 * SWC * ES <= WR_OFF - XR_OFF, "staged input fits");
static_assert(BW % 64 == 0 && BN % 16 == 0, "tile sizes");

__device__ __forceinline__ float ks_load(const float* p) { return *p; }
__device__ __forceinline__ float ks_load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float ks_load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ void ks_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void ks_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ __forceinline__ void ks_store(__half* p, float v) { *p = __float2half(v); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16-byte asynchronous copy global -> shared; src_bytes 0 writes 16 zero bytes.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}
// D += A * B on the tensor cores; A: 4 registers (16 x k), B: 2 registers (k x 8), D: 16 x 8 float32.
__device__ __forceinline__ void mma_k(float* d, const unsigned* a, const unsigned* bb) {
    if constexpr (ES == 4) {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(bb[0]), "r"(bb[1]));
    } else if constexpr (ks_same<KS_T, __nv_bfloat16>::value) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(bb[0]), "r"(bb[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(bb[0]), "r"(bb[1]));
    }
}
// VEC raw elements -> one 16-byte operand row segment (float32: rounded to TF32).
__device__ __forceinline__ uint4 pack16(const raw_t* v) {
    unsigned u[4];
    if constexpr (ES == 4) {
#pragma unroll
        for (int e = 0; e < 4; ++e) asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u[e]) : "f"(__uint_as_float(v[e])));
    } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) u[e] = (unsigned)v[2 * e] | ((unsigned)v[2 * e + 1] << 16);
    }
    uint4 r;
    r.x = u[0]; r.y = u[1]; r.z = u[2]; r.w = u[3];
    return r;
}

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
// grid: (cdiv(PW, BW / 2) * PH * N * cdiv(K, BN), 1, 1): column tile fastest, then the pooled
// row, then (image, output-channel tile); block: 256 threads; dynamic shared: SMEM_BYTES.
// The launch is one-dimensional: CUDA caps gridDim.y and gridDim.z at 65535 (CUDA C++ Programming
// Guide, "Technical Specifications per Compute Capability"), which a batch or a pooled height
// past 65535 exceeds; gridDim.x goes to 2^31 - 1. Blocks are numbered in the order the
// three-dimensional grid had (column tile fastest), so they are scheduled as before.
extern "C" __global__ void __launch_bounds__(THREADS, MINB)
conv_relu_maxpool_tc(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                     KS_T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ctiles = (PW + BW / 2 - 1) / (BW / 2);  // column tiles (BW conv columns each)
    const long long bid = blockIdx.x;
    const int ow0 = (int)(bid % ctiles) * BW;     // first conv column of the tile
    const int ph = (int)((bid / ctiles) % PH);    // pooled row: conv rows 2ph, 2ph+1
    const int bz = (int)(bid / ((long long)ctiles * PH));
    const int ktiles = (K + BN - 1) / BN;
    const int n = bz / ktiles, k0 = (bz % ktiles) * BN;
    const int ih0 = 2 * ph - 1;                   // input row of staged row 0 (padding 1)
    const int gc0 = ow0 - VEC;                    // input column of staged column 0
    const raw_t* xn = reinterpret_cast<const raw_t*>(x) + (long long)n * C * H * W;
    const raw_t* wr = reinterpret_cast<const raw_t*>(w);
    // 16-byte copies need 16-byte rows: W a multiple of VEC (input), C a multiple of CK (weights).
    const bool x_vec = (W % VEC == 0) && ((reinterpret_cast<unsigned long long>(x) & 15) == 0);
    const bool w_vec = (C % CK == 0) && ((reinterpret_cast<unsigned long long>(w) & 15) == 0);

    // ---- stage chunk c0 (raw layouts, zeros outside the image and the channel / out-channel range)
    auto stage = [&](int c0) {
        for (int q = tid; q < CK * 4 * SCH; q += THREADS) {
            const int sc = q % SCH, r = (q / SCH) % 4, c = q / (4 * SCH);
            const int ih = ih0 + r, cc = c0 + c, gcol = gc0 + sc * VEC;
            unsigned char* dst = smem + XR_OFF + ((c * 4 + r) * SWC + sc * VEC) * ES;
            const bool row_in = cc < C && ih >= 0 && ih < H;
            if (x_vec) {
                const bool in = row_in && gcol >= 0 && gcol + VEC <= W;
                const raw_t* src = in ? xn + ((long long)cc * H + ih) * W + gcol : xn;
                cp_async16(smem_addr(dst), src, in ? 16 : 0);
            } else {
                raw_t* d = reinterpret_cast<raw_t*>(dst);
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const int col = gcol + e;
                    d[e] = (row_in && col >= 0 && col < W) ? xn[((long long)cc * H + ih) * W + col] : (raw_t)0;
                }
            }
        }
        for (int q = tid; q < BN * 18; q += THREADS) {
            const int nn = q / 18, p = q % 18, kk = k0 + nn;
            unsigned char* dst = smem + WR_OFF + nn * WROW + p * 16;
            const long long base = ((long long)kk * C + c0) * 9 + p * VEC;   // element index of the copy
            if (w_vec) {
                const bool in = kk < K;
                cp_async16(smem_addr(dst), in ? wr + base : wr, in ? 16 : 0);
            } else {
                raw_t* d = reinterpret_cast<raw_t*>(dst);
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const int f = p * VEC + e;                                  // c * 9 + tap inside the chunk
                    d[e] = (kk < K && c0 * 9 + f < C * 9) ? wr[base + e] : (raw_t)0;
                }
            }
        }
        cp_async_commit();
    };

    // ---- staged raw tiles -> MMA operand layouts (channels innermost), TF32 rounding for float32
    auto transpose = [&]() {
        const raw_t* xr = reinterpret_cast<const raw_t*>(smem + XR_OFF);
        for (int q = tid; q < 4 * XCOLS * 2; q += THREADS) {
            const int j = q % XCOLS, h = (q / XCOLS) & 1, r = q / (2 * XCOLS);
            const int s = j - 1 + VEC;                                        // staged column of j
            raw_t v[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e) v[e] = xr[((h * VEC + e) * 4 + r) * SWC + s];
            *reinterpret_cast<uint4*>(smem + XS_OFF + (r * XCOLS + j) * PIX + h * 16) = pack16(v);
        }
        for (int q = tid; q < 24 * BN; q += THREADS) {                       // 8 out channels x 4 taps per warp
            const int nlo = q & 7, xq = (q >> 3) & 3, h = (q >> 5) & 1, rest = q >> 6;
            const int tap = (rest % 3) * 4 + xq, nn = (rest / 3) * 8 + nlo;
            if (tap >= 9) continue;
            const raw_t* src = reinterpret_cast<const raw_t*>(smem + WR_OFF + nn * WROW);
            raw_t v[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e) v[e] = src[(h * VEC + e) * 9 + tap];
            *reinterpret_cast<uint4*>(smem + WS_OFF + (tap * BN + nn) * PIX + h * 16) = pack16(v);
        }
    };

    float acc[2][MI][NI][4];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int ni = 0; ni < NI; ++ni)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[rr][mi][ni][q] = 0.f;

    const int wm = warp & 3, wn = warp >> 2;
    const int lj = lane >> 3, li = lane & 7;
    // ldmatrix row addresses: A rows are pixels (matrix j: pixels +8 for odd j, channel half j >> 1),
    // B rows are output channels (matrix j: channels +8 for j >= 2, channel half j & 1).
    const unsigned a_base = smem_addr(smem + XS_OFF) + (wm * (BW / 4) + (lj & 1) * 8 + li) * PIX + (lj >> 1) * 16;
    const unsigned b_base = smem_addr(smem + WS_OFF) + (wn * (BN / 2) + (lj >> 1) * 8 + li) * PIX + (lj & 1) * 16;

    stage(0);
    for (int c0 = 0; c0 < C; c0 += CK) {
        cp_async_wait_all();
        __syncthreads();                 // chunk c0 staged for every thread; previous MMAs done
        transpose();
        __syncthreads();                 // operands ready; staging free
        if (c0 + CK < C) stage(c0 + CK); // overlaps the MMAs below
#pragma unroll 1
        for (int kh = 0; kh < 3; ++kh)
#pragma unroll
        for (int kw = 0; kw < 3; ++kw) {
            const int tap = kh * 3 + kw;
            unsigned bf[NI][2];
#pragma unroll
            for (int np = 0; np < NI / 2; ++np)
                ldmatrix_x4(b_base + (tap * BN + np * 16) * PIX, bf[2 * np][0], bf[2 * np][1], bf[2 * np + 1][0],
                            bf[2 * np + 1][1]);
#pragma unroll
            for (int rr = 0; rr < 2; ++rr)
#pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
                    unsigned af[4];
                    ldmatrix_x4(a_base + ((rr + kh) * XCOLS + mi * 16 + kw) * PIX, af[0], af[1], af[2], af[3]);
#pragma unroll
                    for (int ni = 0; ni < NI; ++ni) mma_k(acc[rr][mi][ni], af, bf[ni]);
                }
        }
    }

    // ---- epilogue: 2x2 max (rows: registers, columns: lanes l, l ^ 4), bias, ReLU, one store
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                float v = fmaxf(acc[0][mi][ni][q], acc[1][mi][ni][q]);
                acc[0][mi][ni][q] = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
            }
    if (g & 1) return;
    KS_T* yrow = y + (((long long)n * K) * PH + ph) * PW;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int pw = (ow0 + wm * (BW / 4) + mi * 16 + g + (q >> 1) * 8) >> 1;
                const int k = k0 + wn * (BN / 2) + ni * 8 + 2 * t + (q & 1);
                if (pw < PW && k < K)
                    ks_store(yrow + (long long)k * PH * PW + pw, fmaxf(acc[0][mi][ni][q] + ks_load(b + k), 0.f));
            }
}
