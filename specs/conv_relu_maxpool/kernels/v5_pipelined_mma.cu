// conv_relu_maxpool v5: tensor-core implicit GEMM (mma.sync) fed straight from a 2- or 3-stage
// cp.async pipeline of raw NCHW tiles, with a pooling epilogue in registers.
//
// The convolution is a GEMM: M = conv output pixels, N = output channels, K = C_in x 9 taps. A
// block owns one pooled row ph of one image (conv rows 2ph and 2ph+1), BW conv columns and BN
// output channels; 8 warps split it 4 (columns) x 2 (channels), so a warp holds 2 rows x BW/4
// columns x BN/2 channels of float32 accumulators (BW = BN = 128: a 64 x 64 warp tile, 32 MMAs
// per k-step for 16 A and 16 B fragment registers). K is walked in chunks of 32 bytes of input
// channels (8 float32 or 16 bfloat16 channels) times the 9 taps, one MMA k-step per tap.
//
// What changes against v4: no operand transposition. v4 copied each chunk raw and then rewrote it
// channel-innermost in a second shared-memory pass between two barriers, which the tensor cores
// waited for. v5 reads the MMA fragments directly from the raw cp.async tiles:
//   - input [channel][row][column] (the NCHW order): an A register holds one pixel (row of A) and
//     one (float32) or two (16-bit: channels 2t, 2t+1, two 16-bit loads packed) channels; the
//     channel stride is padded to 8 (mod 32) words so the 32 lanes of each load hit 32 banks;
//   - weights [out channel][channel * 9 + tap] (the OIHW order, 304-byte rows): a B register holds
//     one output channel and one or two input channels of a tap, also conflict-free;
//   - float32 operands are rounded to the nearest TF32 in registers after the load.
// STAGES (2 or 3) buffers of (input, weights) rotate: chunk i + STAGES - 1 is copied while the
// tensor cores work on chunk i, with one barrier per chunk. Rows that are not 16-byte multiples (odd W,
// C_in % CK != 0, misaligned pointers) take an element path that fills the same layouts, with
// zeros outside the image and the channel / output-channel ranges, so every shape is exact.
//
// Epilogue in registers: the two conv rows of a pooling window sit in the same thread (two
// accumulator tiles), the two columns in lanes l and l ^ 4 (one shuffle); add the bias, ReLU,
// and one store per pooled output. No conv or ReLU map reaches DRAM.
//
// Compiled at run time by NVRTC. KS_T is the element type (float, __nv_bfloat16 or __half); BW
// (conv columns per block: 64 or 128), BN (output channels per block: 64 or 128) and STAGES (2 or 3)
// are tunables. Dynamic shared memory: STAGES * (128 * BW + 304 * BN + 2304) bytes (spec.yaml's
// shared_bytes); two stages of the BW = 64 tile fit two blocks per SM.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BW
#define BW 128
#endif
#ifndef BN
#define BN 128
#endif
#define THREADS 256
#ifndef STAGES
#define STAGES 3
#endif

template <typename A, typename B> struct ks_same { static constexpr bool value = false; };
template <typename A> struct ks_same<A, A> { static constexpr bool value = true; };
template <int S> struct ks_raw;
template <> struct ks_raw<4> { typedef unsigned int type; };
template <> struct ks_raw<2> { typedef unsigned short type; };

constexpr int ES = sizeof(KS_T);            // element bytes
static_assert(ES == 4 || ES == 2, "v5 supports float32, bfloat16 and float16");
typedef ks_raw<ES>::type raw_t;
constexpr int VEC = 16 / ES;                // elements per 16-byte copy
constexpr int CK = 32 / ES;                 // input channels per chunk (one MMA k-step per tap)
constexpr int SWC = BW + 2 * VEC;           // staged columns per input row: ow0-VEC .. ow0+BW+VEC-1
constexpr int SCH = SWC / VEC;              // 16-byte copies per staged input row
// channel stride of the staged input (elements): 4 rows, padded so that the channel stride is
// 8 (mod 32) 32-bit words -- the lanes t = 0..3 of a fragment load then hit disjoint 8-bank groups
// (float32: channel t is t * CS words; 16-bit: channel 2t is t * CS words)
constexpr int CS = 4 * SWC + 8;
static_assert(CS % 32 == 8, "conflict-free channel stride");
static_assert((CS * ES) % 16 == 0, "16-byte aligned staged rows");
constexpr int WROW = 304;                   // bytes per staged weight row (CK * 9 * ES = 288, + 16 pad)
constexpr int WRE = WROW / ES;              // ... in elements
constexpr int XST = 128 * BW + 2304;        // staged input bytes per stage (both dtypes fit)
static_assert(CK * CS * ES <= XST, "staged input fits its stage");
constexpr int STAGE_BYTES = XST + WROW * BN;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;         // = STAGES * (128 * BW + 304 * BN + 2304)
static_assert(SMEM_BYTES == STAGES * (128 * BW + 304 * BN + 2304), "spec.yaml shared_bytes formula");
static_assert(STAGES == 2 || STAGES == 3, "two or three stages");
constexpr int MI = BW / 64;                 // m16 tiles per warp per conv row
constexpr int NI = BN / 16;                 // n8 tiles per warp
static_assert(BW % 64 == 0 && BN % 16 == 0 && (NI % 2 == 0), "tile sizes");
// blocks per SM to ask registers for: 1 for 128 accumulators per thread, else 2 (and what the
// shared memory admits: 228 KiB per SM, 1 KiB reserved per block)
constexpr int MINB_SMEM = 233472 / (SMEM_BYTES + 1024);
constexpr int MINB_REGS = (8 * MI * NI <= 64) ? 2 : 1;
constexpr int MINB = MINB_SMEM < MINB_REGS ? MINB_SMEM : MINB_REGS;

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
// wait until at most STAGES - 2 groups of this thread are pending: the oldest chunk has landed
__device__ __forceinline__ void cp_async_wait_stage() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
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
// one fragment register from staged elements p[0] and p[stride] (16-bit: packed, low half first;
// float32: p[0] rounded to the nearest TF32, ties away from zero: add half a TF32 ulp to the
// magnitude bits and clear the 13 bits TF32 drops -- two integer instructions where cvt.rna.tf32
// takes five on sm_90; CUTLASS's round_half_ulp_truncate, without its test for Inf/NaN, which
// only changes NaNs whose payload sits in the 13 low bits)
__device__ __forceinline__ unsigned frag(const raw_t* p, int stride) {
    if constexpr (ES == 4) {
        return (p[0] + 0x1000u) & 0xffffe000u;
    } else {
        return __byte_perm((unsigned)p[0], (unsigned)p[stride], 0x5410);
    }
}

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
// grid: (cdiv(PW, BW / 2) * PH * N * cdiv(K, BN), 1, 1): column tile fastest, then the pooled
// row, then (image, output-channel tile); block: 256 threads; dynamic shared: SMEM_BYTES.
// The launch is one-dimensional: CUDA caps gridDim.y and gridDim.z at 65535 (CUDA C++ Programming
// Guide, "Technical Specifications per Compute Capability"), which a batch or a pooled height
// past 65535 exceeds; gridDim.x goes to 2^31 - 1. Blocks are numbered in the order the
// three-dimensional grid had (column tile fastest), so they are scheduled as before.
extern "C" __global__ void __launch_bounds__(THREADS, MINB)
conv_relu_maxpool_mma(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
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
    const int nchunks = (C + CK - 1) / CK;

    // ---- stage chunk `chunk` into stage buffer `s` (raw layouts, zeros outside every range)
    auto stage = [&](int chunk, int s) {
        const int c0 = chunk * CK;
        unsigned char* xs = smem + s * STAGE_BYTES;
        unsigned char* ws = xs + XST;
        for (int q = tid; q < CK * 4 * SCH; q += THREADS) {
            const int sc = q % SCH, r = (q / SCH) % 4, c = q / (4 * SCH);
            const int ih = ih0 + r, cc = c0 + c, gcol = gc0 + sc * VEC;
            unsigned char* dst = xs + (c * CS + r * SWC + sc * VEC) * ES;
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
            unsigned char* dst = ws + nn * WROW + p * 16;
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
    const int g = lane >> 2, t = lane & 3;
    // Per-thread element offsets inside a stage. A (pixels x channels): row g of the fragment is
    // conv column wm * BW/4 + g, i.e. staged column that + kw - 1 + VEC; its channel is t (float32)
    // or 2t (16-bit; 2t + 1 at + CS). B (channels x out channels): out channel wn * BN/2 + g,
    // channel t (float32) or 2t (16-bit; 2t + 1 at + 9).
    constexpr int KA = (ES == 4) ? 1 : 2;         // channels per fragment register
    const int a_off = (KA * t) * CS + wm * (BW / 4) + g + VEC - 1;
    const int b_off = (wn * (BN / 2) + g) * WRE + (KA * t) * 9;

#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nchunks) stage(s, s);
        cp_async_commit();                        // one group per stage, empty or not
    }
#pragma unroll 1
    for (int i = 0; i < nchunks; ++i) {
        cp_async_wait_stage();
        __syncthreads();                          // chunk i visible to all; chunk i - 1's buffer free
        if (i + STAGES - 1 < nchunks) stage(i + STAGES - 1, (i + STAGES - 1) % STAGES);
        cp_async_commit();
        const raw_t* xs = reinterpret_cast<const raw_t*>(smem + (i % STAGES) * STAGE_BYTES) + a_off;
        const raw_t* ws = reinterpret_cast<const raw_t*>(smem + (i % STAGES) * STAGE_BYTES + XST) + b_off;
        // all 9 taps unrolled when registers allow (one block per SM); rows of taps otherwise
#pragma unroll (MINB == 1 ? 3 : 1)
        for (int kh = 0; kh < 3; ++kh)
#pragma unroll
            for (int kw = 0; kw < 3; ++kw) {
                const int tap = kh * 3 + kw;
                unsigned bf[NI][2];
#pragma unroll
                for (int ni = 0; ni < NI; ++ni) {
                    const raw_t* p = ws + ni * 8 * WRE + tap;
                    bf[ni][0] = frag(p, 9);                       // channels t (2t, 2t + 1)
                    bf[ni][1] = frag(p + 4 * KA * 9, 9);          // channels t + 4 (2t + 8, 2t + 9)
                }
#pragma unroll
                for (int rr = 0; rr < 2; ++rr)
#pragma unroll
                    for (int mi = 0; mi < MI; ++mi) {
                        const raw_t* p = xs + (rr + kh) * SWC + mi * 16 + kw;
                        unsigned af[4];
                        af[0] = frag(p, CS);                      // pixel g,     channels t (2t, 2t + 1)
                        af[1] = frag(p + 8, CS);                  // pixel g + 8
                        af[2] = frag(p + 4 * KA * CS, CS);        // pixel g,     channels t + 4 (2t + 8, ..)
                        af[3] = frag(p + 4 * KA * CS + 8, CS);    // pixel g + 8
#pragma unroll
                        for (int ni = 0; ni < NI; ++ni) mma_k(acc[rr][mi][ni], af, bf[ni]);
                    }
            }
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");  // no copy outlives the block

    // ---- epilogue: 2x2 max (rows: registers, columns: lanes l, l ^ 4), bias, ReLU, one store
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
    for (int ni = 0; ni < NI; ++ni)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const int k = k0 + wn * (BN / 2) + ni * 8 + 2 * t + c;
            if (k >= K) continue;
            const float bias = ks_load(b + k);
#pragma unroll
            for (int mi = 0; mi < MI; ++mi)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int pw = (ow0 + wm * (BW / 4) + mi * 16 + g + h * 8) >> 1;
                    if (pw < PW)
                        ks_store(yrow + (long long)k * PH * PW + pw, fmaxf(acc[0][mi][ni][2 * h + c] + bias, 0.f));
                }
        }
}
