// conv_relu_maxpool v7: Hopper warpgroup MMA (wgmma.mma_async, sm_90a) with BOTH operands read by the
// tensor cores from shared memory through matrix descriptors, a persistent block whose three operand
// buffers keep one wgmma group in flight across the block barrier, and the pooling epilogue in registers.
//
// The convolution is a GEMM: M = conv output pixels, N = output channels, K = 9 taps x C_in. A tile is
// ROWS conv rows (ROWS / 2 pooled rows) x BW = 256 / ROWS conv columns x BN output channels of one
// image; its two warpgroups (256 threads) own 2 conv rows x 64 columns each (warpgroup wg: pooled row
// pr = wg / (BW / 64), column group wc = wg % (BW / 64)), i.e. two m64nBN accumulator tiles (BN / 2
// float32 registers each per thread). K runs (channel chunk, tap, channel): a chunk is 32 bytes of
// input channels (CK = 8 float32 / 16 bfloat16), and inside it each tap is one wgmma k-step of 32 bytes
// (k8 TF32 / k16 bfloat16): 9 k-steps x 2 conv rows = 18 wgmmas per warpgroup per chunk.
//
// What changes against v6 (A fragments loaded into registers by every thread, wait_group 0 and a
// barrier per chunk with nothing in flight):
//   - A (pixels) is staged ONCE per chunk into a no-swizzle K-major layout and read by the tensor cores
//     through a descriptor, for every tap: [kg: 16-byte half of the chunk][staged pixel][16 bytes],
//     staged pixels row-major over (ROWS + 2) rows x (BW + 2) columns (the tile with its halo: conv
//     row r, column j of tap (kh, kw) reads staged pixel (r + kh) * SWA + j + kw). Every 8 consecutive
//     pixels of a kg are one 128-byte core matrix whatever the first pixel, so the m64 x k operand of
//     tap (kh, kw), conv row r, column group wc is the descriptor with start A + ((r + kh) * SWA +
//     64 wc + kw) * 16, SBO = 128 (next 8 pixels: M), LBO = NPIX * 16 (next 16 bytes of K). No A
//     registers, no per-lane A loads (v6: 36 shared loads per thread per chunk per conv row).
//   - B (weights) is staged per chunk as [tap][kg][output channel][16 bytes] (SBO = 128: next 8 output
//     channels; LBO = BN * 16: next 16 bytes of K). From OIHW the VEC channels of one (o, tap) are 9
//     elements apart, so B goes through registers: thread (o, kg) reads the 9 * VEC contiguous elements
//     w[o][c0 + kg VEC .. c0 + kg VEC + VEC - 1][0..8] (144 bytes: nine 16-byte loads when C_in is a
//     multiple of VEC and w is 16-byte aligned, else element loads) and writes the nine 16-byte words
//     of its taps (a byte permutation per register pair in bfloat16).
//   - A goes through registers too (NCHW -> channel-innermost): each thread builds 16-byte words of
//     VEC channels of one pixel from VEC scalar loads (lanes = consecutive pixels: coalesced along W)
//     and stores them; consecutive lanes write consecutive 16-byte words (conflict-free; B likewise,
//     lanes = consecutive output channels). Scalar loads have no alignment needs, so ragged W, odd
//     C_in and misaligned pointers take the same path, with zeros outside the image and channel ranges.
//   - Float32 operands are rounded to the nearest TF32 (ties away: add half a TF32 ulp, clear the 13
//     low bits) once, in registers, before the store (v6: A at every load, B in place).
//   - Three operand buffers and a flattened (tile, chunk) loop: iteration i issues chunk i's 18 wgmmas
//     (one commit group), then stages chunk i + 1 (loads in flight while the tensor cores work), then
//     waits only for group i - 1 (wgmma.wait_group 1) before the barrier: group i keeps running across
//     the barrier and group i + 1 is queued behind it. The buffer staged at iteration i, (i + 1) % 3,
//     was last read by group i - 2, complete at every warpgroup's wait of iteration i - 1 (before the
//     barrier that ends it). At the last chunk of a tile the wait is wait_group 0, then the epilogue.
//   - Persistent blocks (grid = min(tiles, 132 SMs x blocks per SM)) walk tiles blockIdx.x, + gridDim.x,
//     ...: the next tile's first chunk is staged while the current tile's last wgmmas run.
//   - Staging latency: at BN = 128 (one block per SM; 214-254 registers) every global load of a chunk
//     (A: 4-5 words x VEC scalars, B: two 72-byte rows as nine 8-byte loads each) is issued before
//     the first store, so a chunk costs one memory latency, under its predecessor's 18 wgmmas; at
//     BN = 64 (two blocks per SM, <= 128 registers) B goes first, then A word by word, and the other
//     block's wgmmas cover the latencies. ptxas (nvcc 13, sm_90a): 0 spills in all 8 builds; no
//     injected wgmma wait (C7517): inside the loop only wgmma writes the accumulators (scale-d = 0
//     starts a tile; the epilogue only reads them) and the loop ends with an explicit wait_group 0.
// Ordering: the staging stores (generic proxy) are followed by fence.proxy.async.shared::cta and the
// barrier before any wgmma (async proxy) reads them.
//
// Epilogue in registers (wgmma's accumulator layout: thread (warp w, lane g * 4 + t) holds pixel rows
// 16w + g and 16w + g + 8, output channels 8j + 2t, 8j + 2t + 1): the two conv rows of a pooling
// window are the two accumulator tiles of the same thread, the two columns lanes l and l ^ 4 (one
// shuffle); add the bias, ReLU, and one store per pooled output.
//
// Compiled at run time by NVRTC for sm_90a (spec.yaml's launch.arch_specific). KS_T is the element type
// (float or __nv_bfloat16); BN (64 or 128 output channels) and ROWS (2 or 4 conv rows per tile) are
// tunables. Dynamic shared memory: 3 * (32 * (ROWS + 2) * (256 / ROWS + 2) + 288 * BN) bytes
// (spec.yaml's shared_bytes): ROWS 2 / 4 = 16640 / 12672 bytes of A and BN 64 / 128 = 18432 / 36864
// bytes of B per buffer, the same in both dtypes (K is counted in bytes): 105216 / 93312 (BN 64, two
// blocks per SM) and 160512 / 148608 (BN 128, one block per SM) of the H200's 227 KiB per block.
// Diagnosis macros (not tunables; bench/conv_v7_probe.py): V7_DESC_SWAP=1 / 2 / 3 exchanges LBO and SBO
// in A's / B's / both descriptors; V7_WAIT0=1 waits for every group before the barrier (none across it).
#include <cuda_bf16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BN
#define BN 128
#endif
#ifndef ROWS
#define ROWS 2
#endif
#ifndef V7_DESC_SWAP
#define V7_DESC_SWAP 0
#endif
#ifndef V7_WAIT0
#define V7_WAIT0 0
#endif
#define THREADS 256                         // two warpgroups

template <typename A, typename B> struct ks_same { static constexpr bool value = false; };
template <typename A> struct ks_same<A, A> { static constexpr bool value = true; };
template <int S> struct ks_raw;
template <> struct ks_raw<4> { typedef unsigned int type; };
template <> struct ks_raw<2> { typedef unsigned short type; };

constexpr int ES = sizeof(KS_T);            // element bytes
static_assert(ks_same<KS_T, float>::value || ks_same<KS_T, __nv_bfloat16>::value,
              "v7 supports float32 (as TF32) and bfloat16");
typedef ks_raw<ES>::type raw_t;
constexpr int VEC = 16 / ES;                // channels per 16-byte word (a core-matrix row's K)
constexpr int CK = 2 * VEC;                 // channels per chunk: 32 bytes = one wgmma k-step per tap
constexpr int KA = 4 / ES;                  // elements per 32-bit register
static_assert(ROWS == 2 || ROWS == 4, "one or two pooled rows per tile");
static_assert(BN == 64 || BN == 128, "wgmma n = BN");
constexpr int BW = 256 / ROWS;              // conv columns per tile (two warpgroups x 128 pixels)
constexpr int WGC = BW / 64;                // warpgroups side by side along a row
constexpr int PRB = ROWS / 2;               // pooled rows per tile
constexpr int SR = ROWS + 2;                // staged input rows (halo 1 above, 1 below)
constexpr int SWA = BW + 2;                 // staged input columns (halo 1 left, 1 right)
constexpr int NPIX = SR * SWA;              // staged pixels
constexpr int A_WORDS = 2 * NPIX;           // 16-byte words of A per chunk ([kg][pixel])
constexpr int A_BYTES = 16 * A_WORDS;
constexpr int B_JOBS = 4 * BN;              // (output channel, kg, half) rows of 72 bytes per chunk
constexpr int B_IT = B_JOBS / THREADS;      // B jobs per thread: 1 (BN = 64) or 2 (BN = 128)
constexpr int BHR = 72 / 4;                 // 32-bit registers per B job
constexpr int B_BYTES = 9 * 2 * BN * 16;    // [tap][kg][o][16 bytes] = 288 * BN
constexpr int BUF_BYTES = A_BYTES + B_BYTES;
constexpr int NBUF = 3;
constexpr int SMEM_BYTES = NBUF * BUF_BYTES;
static_assert(SMEM_BYTES == 3 * (32 * (ROWS + 2) * (256 / ROWS + 2) + 288 * BN), "spec.yaml shared_bytes formula");
static_assert(A_BYTES % 128 == 0 && B_BYTES % 128 == 0, "128-byte aligned operand tiles");
static_assert(SMEM_BYTES <= 227 * 1024, "fits one H200 block");
static_assert(B_JOBS % THREADS == 0, "whole B jobs per thread");
constexpr int A_IT = (A_WORDS + THREADS - 1) / THREADS;   // A words per thread (the last one guarded)
// BN = 128: A's and B's loads in one batch; BN = 64 (two blocks per SM, <= 128 registers): B, then
// A one word at a time (a memory latency per word; the other block's wgmmas cover them)
constexpr bool A_FIRST = BN == 64;      // (the name: A word by word; B goes first)
template <int V> struct ks_int { static constexpr int value = V; __host__ __device__ constexpr operator int() const { return V; } };
// matrix descriptor strides (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout:
// Matrix Descriptor": LBO = byte distance between core matrices adjacent in K, SBO = between core
// matrices adjacent in M / N, for the K-major no-swizzle layout; fields hold bytes >> 4)
constexpr int LBO_A = NPIX * 16, SBO_A = 128;
constexpr int LBO_B = BN * 16, SBO_B = 128;
static_assert((LBO_A >> 4) < (1 << 14) && (LBO_B >> 4) < (1 << 14), "14-bit descriptor fields");
constexpr int NACC = BN / 2;                // accumulator registers per thread per conv row
constexpr int MINB = (BN == 128) ? 1 : 2;   // blocks per SM (the grid's 128 // BN)

__device__ __forceinline__ float ks_load(const float* p) { return *p; }
__device__ __forceinline__ float ks_load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void ks_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void ks_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// float32 -> nearest TF32, ties away from zero (the 13 low bits cleared), as v5 and v6
__device__ __forceinline__ unsigned tf32_rna(unsigned u) { return (u + 0x1000u) & 0xffffe000u; }
__device__ __forceinline__ unsigned rnd(unsigned u) {
    if constexpr (ES == 4) return tf32_rna(u); else return u;
}

// descriptor without its start address: bits 16-29 LBO >> 4, bits 32-45 SBO >> 4, base offset
// (49-51) 0, swizzle (62-63) 0 = none; the start address (bits 0-13, byte address >> 4) is added
// (OPERAND: 1 = A, 2 = B; V7_DESC_SWAP's bit OPERAND set exchanges that operand's LBO and SBO)
template <int LBO, int SBO, int OPERAND> __device__ __forceinline__ constexpr unsigned long long desc_hi() {
    constexpr bool swap = (V7_DESC_SWAP & OPERAND) != 0;
    constexpr unsigned long long lead = (swap ? SBO : LBO) >> 4;
    constexpr unsigned long long stride = (swap ? LBO : SBO) >> 4;
    return (lead << 16) | (stride << 32);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// an accumulator read that stays after the wgmma wait before it (volatile asm keep their order); a
// read, never a write: inside the loop only wgmma writes the accumulators, else ptxas waits for
// every group at the loop's back edge (C7517 "warpgroup.wait is injected")
__device__ __forceinline__ float acc_read(float a) {
    float v;
    asm volatile("mov.b32 %0, %1;\n" : "=f"(v) : "f"(a));
    return v;
}

#define KS_D8(b) "+f"(d[b + 0]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), "+f"(d[b + 4]), "+f"(d[b + 5]), \
                 "+f"(d[b + 6]), "+f"(d[b + 7])
#define KS_R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
#define KS_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "

// D (64 x BN, float32, this thread's NACC registers) = A (64 x k, descriptor) * B (k x BN, descriptor)
// + (acc ? D : 0): scale-d, the predicate p, is 0 for a tile's first k-step
__device__ __forceinline__ void wgmma_ss(float* d, unsigned long long da, unsigned long long db, int acc) {
#if BN == 64
    if constexpr (ES == 4) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " KS_R32 "%32, %33, p, 1, 1;\n}\n"
                     : KS_D8(0), KS_D8(8), KS_D8(16), KS_D8(24)
                     : "l"(da), "l"(db), "r"(acc));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " KS_R32 "%32, %33, p, 1, 1, 0, 0;\n}\n"
                     : KS_D8(0), KS_D8(8), KS_D8(16), KS_D8(24)
                     : "l"(da), "l"(db), "r"(acc));
    }
#else
    if constexpr (ES == 4) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " KS_R64 "%64, %65, p, 1, 1;\n}\n"
                     : KS_D8(0), KS_D8(8), KS_D8(16), KS_D8(24), KS_D8(32), KS_D8(40), KS_D8(48), KS_D8(56)
                     : "l"(da), "l"(db), "r"(acc));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " KS_R64 "%64, %65, p, 1, 1, 0, 0;\n}\n"
                     : KS_D8(0), KS_D8(8), KS_D8(16), KS_D8(24), KS_D8(32), KS_D8(40), KS_D8(48), KS_D8(56)
                     : "l"(da), "l"(db), "r"(acc));
    }
#endif
}

// The tile of index t (column tile fastest, then pooled-row tile, then image x output-channel tile)
struct Tile {
    int n, k0, ph0, ow0;
};
__device__ __forceinline__ Tile decode(long long t, int ctiles, int rtiles, int ktiles) {
    Tile r;
    r.ow0 = (int)(t % ctiles) * BW;
    r.ph0 = (int)((t / ctiles) % rtiles) * PRB;
    const long long bz = t / ((long long)ctiles * rtiles);
    r.n = (int)(bz / ktiles);
    r.k0 = (int)(bz % ktiles) * BN;
    return r;
}

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
// grid: (min(tiles, SM_COUNT * (128 / BN)), 1, 1) (SM_COUNT: the device's multiprocessor count, 132 on an H200), tiles = cdiv(PW, BW / 2) * cdiv(PH, ROWS / 2) * N *
// cdiv(K, BN); block: 256 threads; dynamic shared: SMEM_BYTES.
extern "C" __global__ void __launch_bounds__(THREADS, MINB)
conv_relu_maxpool_wgmma_ss(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                           KS_T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ctiles = (PW + BW / 2 - 1) / (BW / 2), rtiles = (PH + PRB - 1) / PRB, ktiles = (K + BN - 1) / BN;
    const long long ntiles = (long long)ctiles * rtiles * N * ktiles;
    if ((long long)blockIdx.x >= ntiles) return;
    const int nchunks = (C + CK - 1) / CK;
    const long long my_tiles = (ntiles - 1 - blockIdx.x) / gridDim.x + 1;
    const long long total = my_tiles * nchunks;   // iterations: (tile, chunk) pairs of this block
    const raw_t* xr = reinterpret_cast<const raw_t*>(x);
    const raw_t* wr = reinterpret_cast<const raw_t*>(w);
    const long long HW = (long long)H * W;
    // 16-byte weight loads: every (o, c0 + kg VEC) row start is then 16-byte aligned
    const bool w_vec = (C % VEC == 0) && ((reinterpret_cast<unsigned long long>(w) & 15) == 0);
    const unsigned sbase = smem_addr(smem);

    // ---- stage chunk `chunk` of tile `tl` into buffer `buf`
    auto stage = [&](const Tile& tl, int chunk, int buf) {
        const int c0 = chunk * CK;
        unsigned char* as = smem + buf * BUF_BYTES;
        unsigned char* bs = as + A_BYTES;
        // The global loads are issued before the stores that need them (one memory latency per batch,
        // not one per word): A's scalar loads, then B's, then B's stores, then A's (A_FIRST, BN = 64:
        // B, then A word by word).
        // A: word q = kg * NPIX + p holds channels c0 + kg VEC .. + VEC - 1 of staged pixel p
        const int ih0 = 2 * tl.ph0 - 1, iw0 = tl.ow0 - 1;
        const raw_t* xn = xr + (long long)tl.n * C * HW;
        unsigned ra[A_IT][VEC];                   // one element per register
        auto a_loads = [&]() {  // no auto parameters: the device's NVRTC 13.0 refused them (session 16)
#pragma unroll
        for (int i = 0; i < A_IT; ++i) {
            const int q = tid + i * THREADS;
            const bool act = A_WORDS % THREADS == 0 || q < A_WORDS;
            const int kg = q >= NPIX ? 1 : 0, p = q - kg * NPIX;
            const int sr = p / SWA, sc = p - sr * SWA;
            const int ih = ih0 + sr, iw = iw0 + sc, cb = c0 + kg * VEC;
            const bool pix = act && ih >= 0 && ih < H && iw >= 0 && iw < W;
            const raw_t* src = xn + (long long)cb * HW + (long long)ih * W + iw;
#pragma unroll
            for (int e = 0; e < VEC; ++e)             // channel cb + e
                ra[i][e] = (pix && cb + e < C) ? (unsigned)src[e * HW] : 0u;
        }
        };
        auto a_stores = [&]() {  // no auto parameters: the device's NVRTC 13.0 refused them (session 16)
#pragma unroll
        for (int i = 0; i < A_IT; ++i) {
            const int q = tid + i * THREADS;
            if (A_WORDS % THREADS == 0 || q < A_WORDS) {
                unsigned wd[4];
#pragma unroll
                for (int r = 0; r < 4; ++r) {         // register r: channels cb + KA r .. (KA per register)
                    unsigned u = 0;
#pragma unroll
                    for (int k = 0; k < KA; ++k) u |= ra[i][r * KA + k] << (16 * k);
                    wd[r] = rnd(u);
                }
                *reinterpret_cast<uint4*>(as + q * 16) = make_uint4(wd[0], wd[1], wd[2], wd[3]);
            }
        }
        };
        if constexpr (!A_FIRST) a_loads();
        // B: job j = (h, o, kg) = (j & 1, (j >> 1) % BN, (j >> 1) / BN) turns the 72 contiguous bytes
        // w[o][cb + h VEC / 2 .. cb + h VEC / 2 + VEC / 2 - 1][0..8] into the 8-byte halves h of the
        // nine words (o, tap, kg). Lanes (h, o) pairs: a half-warp writes 128 contiguous bytes.
        unsigned v[B_IT][BHR];                    // the 72 bytes of each job, as 32-bit registers
#pragma unroll
        for (int jb = 0; jb < B_IT; ++jb) {
            const int j = tid + jb * THREADS;
            const int h = j & 1, o = (j >> 1) % BN, kg = (j >> 1) / BN, oo = tl.k0 + o;
            const int cb = c0 + kg * VEC + h * (VEC / 2);    // first channel of the half
            const raw_t* src = wr + ((long long)oo * C + cb) * 9;
            if (w_vec) {                          // cb < C: all VEC / 2 channels in range (C % VEC == 0)
                const bool in = oo < K && cb < C;
                const uint2* s2 = reinterpret_cast<const uint2*>(src);
#pragma unroll
                for (int q = 0; q < BHR / 2; ++q) {
                    const uint2 u = in ? __ldg(s2 + q) : make_uint2(0u, 0u);
                    v[jb][2 * q] = u.x;
                    v[jb][2 * q + 1] = u.y;
                }
            } else {
#pragma unroll
                for (int r = 0; r < BHR; ++r) {
                    unsigned u = 0;
#pragma unroll
                    for (int k = 0; k < KA; ++k) {
                        const int e = r * KA + k;           // element: channel cb + e / 9, tap e % 9
                        const unsigned val = (oo < K && cb + e / 9 < C) ? (unsigned)src[e] : 0u;
                        u |= val << (16 * k);
                    }
                    v[jb][r] = u;
                }
            }
        }
#pragma unroll
        for (int jb = 0; jb < B_IT; ++jb) {
            const int j = tid + jb * THREADS;
            const int h = j & 1, o = (j >> 1) % BN, kg = (j >> 1) / BN;
#pragma unroll
            for (int tap = 0; tap < 9; ++tap) {
                unsigned wd[2];
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    if constexpr (ES == 4) {
                        wd[r] = tf32_rna(v[jb][r * 9 + tap]);        // channel cb + r
                    } else {
                        const int e0 = (2 * r) * 9 + tap, e1 = (2 * r + 1) * 9 + tap;  // channels cb + 2r, + 1
                        wd[r] = __byte_perm(v[jb][e0 >> 1], v[jb][e1 >> 1], ((e0 & 1) ? 0x0032 : 0x0010) |
                                                                                ((e1 & 1) ? 0x7600 : 0x5400));
                    }
                }
                *reinterpret_cast<uint2*>(bs + ((tap * 2 + kg) * BN + o) * 16 + 8 * h) = make_uint2(wd[0], wd[1]);
            }
        }
        if constexpr (!A_FIRST) {
            a_stores();
        } else {                                  // one word at a time: its loads, then its store
#pragma unroll
            for (int i = 0; i < A_IT; ++i) {
                const int q = tid + i * THREADS;
                if (A_WORDS % THREADS != 0 && q >= A_WORDS) break;
                const int kg = q >= NPIX ? 1 : 0, p = q - kg * NPIX;
                const int sr = p / SWA, sc = p - sr * SWA;
                const int ih = ih0 + sr, iw = iw0 + sc, cb = c0 + kg * VEC;
                const bool pix = ih >= 0 && ih < H && iw >= 0 && iw < W;
                const raw_t* src = xn + (long long)cb * HW + (long long)ih * W + iw;
                unsigned wd[4];
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    unsigned u = 0;
#pragma unroll
                    for (int k = 0; k < KA; ++k) {
                        const int e = r * KA + k;           // channel cb + e
                        const unsigned val = (pix && cb + e < C) ? (unsigned)src[e * HW] : 0u;
                        u |= val << (16 * k);
                    }
                    wd[r] = rnd(u);
                }
                *reinterpret_cast<uint4*>(as + q * 16) = make_uint4(wd[0], wd[1], wd[2], wd[3]);
            }
        }
    };

    float acc[2][NACC];                       // zeroed once; a tile's first k-step overwrites them
#pragma unroll
    for (int rr = 0; rr < 2; ++rr)
#pragma unroll
        for (int i = 0; i < NACC; ++i) acc[rr][i] = 0.f;

    const int wg = warp >> 2, wq = warp & 3;      // warpgroup, warp inside it
    const int g = lane >> 2, t = lane & 3;
    const int pr = wg / WGC, wc = wg % WGC;       // this warpgroup's pooled row and column group
    // A descriptor of tap (0, 0), conv row 2 pr, buffer 0 (start: staged pixel (2 pr) * SWA + 64 wc)
    const unsigned long long a_desc0 = desc_hi<LBO_A, SBO_A, 1>() + ((sbase >> 4) & 0x3FFF) +
                                       (unsigned)((2 * pr) * SWA + 64 * wc);
    const unsigned long long b_desc0 = desc_hi<LBO_B, SBO_B, 2>() + (((sbase + A_BYTES) >> 4) & 0x3FFF);

    long long cur_t = blockIdx.x;                 // tile of the current iteration
    int cur_c = 0;                                // its chunk
    long long nxt_t = cur_t;                      // (tile, chunk) of the next iteration
    int nxt_c = 0;
    Tile cur = decode(cur_t, ctiles, rtiles, ktiles);
    stage(cur, 0, 0);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // visible to wgmma's reads
    __syncthreads();
    int buf = 0;
#pragma unroll 1
    for (long long it = 0; it < total; ++it) {
        // chunk cur_c of tile cur_t is in buffer `buf`: 9 taps x 2 conv rows, one commit group
        wgmma_fence();
        {
            // this buffer's two base descriptors, opaque to the compiler: it would otherwise keep
            // all 27 loop-invariant descriptors (base + tap offset) live in 54 registers
            unsigned long long da0 = a_desc0 + buf * (BUF_BYTES / 16), db0 = b_desc0 + buf * (BUF_BYTES / 16);
            asm volatile("" : "+l"(da0), "+l"(db0));
#pragma unroll
            for (int tap = 0; tap < 9; ++tap) {
                const int kh = tap / 3, kw = tap % 3;
                const unsigned long long db = db0 + tap * (2 * BN);  // + tap * 2 * BN * 16 bytes
#pragma unroll
                for (int rr = 0; rr < 2; ++rr)
                    wgmma_ss(acc[rr], da0 + (unsigned)((rr + kh) * SWA + kw), db, tap > 0 || cur_c > 0);
            }
        }
        wgmma_commit();
        // the next (tile, chunk), staged while this group runs
        if (++nxt_c == nchunks) {
            nxt_c = 0;
            nxt_t += gridDim.x;
        }
        const int nbuf = buf == NBUF - 1 ? 0 : buf + 1;
        if (it + 1 < total) {
            const Tile nt = decode(nxt_t, ctiles, rtiles, ktiles);
            stage(nt, nxt_c, nbuf);
        }
        if (cur_c == nchunks - 1) {
            // ---- the tile's last chunk: drain, then the epilogue: 2x2 max (rows: the two tiles,
            // columns: lanes l, l ^ 4), bias, ReLU, one store per pooled output
            wgmma_wait<0>();
            const int ph = cur.ph0 + pr;
            KS_T* yrow = y + (((long long)cur.n * K) * PH + ph) * PW;
#pragma unroll
            for (int i = 0; i < NACC; ++i) {
                float v = fmaxf(acc_read(acc[0][i]), acc_read(acc[1][i]));
                v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
                // register i: pixel row 16 wq + g + 8 ((i >> 1) & 1), output channel 8 (i >> 2) + 2t + (i & 1)
                const int k = cur.k0 + 8 * (i >> 2) + 2 * t + (i & 1);
                const int pw = (cur.ow0 + 64 * wc + 16 * wq + g + 8 * ((i >> 1) & 1)) >> 1;
                if (!(g & 1) && k < K && pw < PW && ph < PH)
                    ks_store(yrow + (long long)k * PH * PW + pw, fmaxf(v + ks_load(b + k), 0.f));
            }
            cur_t += gridDim.x;
            cur_c = 0;
            if (it + 1 < total) cur = decode(cur_t, ctiles, rtiles, ktiles);
        } else {
#if V7_WAIT0
            wgmma_wait<0>();
#else
            wgmma_wait<1>();                      // group it - 1 done: buffer (it + 2) % 3 is free
#endif
            ++cur_c;
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // this iteration's stores
        __syncthreads();                          // chunk it + 1 visible to all; group it - 1 done in all
        buf = nbuf;
    }
    // (every group is complete here: the last iteration is a tile's last chunk; said for ptxas,
    // which otherwise injects a wait at the loop's back edge, in front of every iteration)
    wgmma_wait<0>();
}
