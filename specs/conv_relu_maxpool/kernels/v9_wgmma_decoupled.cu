// conv_relu_maxpool v9: v8's warp-specialized wgmma pipeline with the producer's chain of waits broken.
//
// Timing-only variants of v8's producer (bench/v8_experiments.py; the spec's notes keep their numbers):
// each piece of the producer's per-chunk work -- the weight copies, the pixel copies, the transposition --
// costs about the same, and their costs add: v8's producer runs them as
// one serial chain per chunk -- transpose chunk j - 1 (after its copies land), wait for stage j to be
// emptied, issue chunk j's copies, and then transpose chunk j, which first waits for those copies -- so
// every chunk pays the bulk copies' full latency plus the transposition, and the consumers wait on it.
//
// v9 keeps v8's layouts, tiles, consumers and epilogue, and changes only who waits for what:
//   - The raw pixel tile of a stage is the producer's own: it is free once every producer thread has
//     transposed the chunk it held (that stage's fullb phase), not when the consumers empty the stage.
//     So the pixels of chunk j + 2 are copied while chunk j is transposed: two chunks ahead, their
//     latency off the chain.
//   - The pixels and the weights complete on mbarriers of their own: xb[s] (pixel bytes; the producer
//     waits on it before the transposition) and wb[s] (weight bytes; the consumers wait on it before
//     loading fragments). The weights of chunk j are copied as soon as the consumers empty the stage.
//   - Producer iteration j: pixels of chunk j + 2 (wait: fullb of chunk j - 1), weights of chunk j
//     (wait: emptyb of chunk j - 3), transposition of chunk j (wait: xb of chunk j), fullb.
// What follows is v8's design, which v9 keeps (with the barrier names above).
//
// Hopper warpgroup MMA (wgmma.mma_async, sm_90a) fed by a warp-specialized,
// fully asynchronous pipeline: a producer warp moves every operand byte from global to shared memory
// with bulk asynchronous copies (cp.async.bulk, completion counted in bytes on an mbarrier), two
// consumer warpgroups only issue wgmmas, and mbarriers (not block barriers) hand the three stage
// buffers back and forth. Pooling epilogue in registers.
//
// The GEMM, transposed against v6 / v7: M = output channels (the weights are the register operand
// A), N = conv output pixels (the B operand, read by the tensor cores through a shared-memory
// descriptor), K = (channel chunk, tap, channel). A tile is ROWS conv rows x BW = 128 conv columns
// x BN output channels of one image; consumer warpgroup wg owns output channels 64 (wg % WGN) ..
// + 63 and conv rows 2 (wg / WGN), + 1 of the tile: per k-step two m64n128 wgmmas (one per conv
// row), 64 + 64 float32 accumulators per thread. A chunk is 32 bytes of input channels (CK = 8
// float32 / 16 bfloat16); inside it each of the 9 taps is one k-step (k8 TF32 / k16 bfloat16).
//
// Why (v7's threads load each chunk from global memory into registers for the staging and wait on those
// loads; v6: A fragments loaded per tap by every thread, wait_group 0 and a barrier per chunk):
//   - No thread holds staged data across a memory latency. Per chunk the producer issues one bulk
//     copy per (channel, input row) of the raw NCHW tile ([channel][staged row][144 elements]: the
//     tile's BW + 2 VEC columns) and one 288-byte bulk copy per output channel of the raw OIHW weight
//     rows ([output channel][304-byte padded row]); the bytes land on the stage's mbarriers (xb, wb),
//     whose expected transaction counts each producer lane adds for its own copies.
//   - TF32 wgmma needs both shared-memory operands K-major (channel-innermost); NCHW is not. The
//     producer turns the raw pixel tile into the K-major B operand in shared memory
//     ([16-byte half kg of the chunk][staged pixel][16 bytes], staged pixels row-major over SR = ROWS
//     + 2 rows x SWA = 132 columns; staged column 1 is image column ow0 - 1), one 8-byte (float32)
//     or 4-byte (bfloat16) load per channel of a pixel pair and four conflict-free 16-byte stores, rounding float32
//     to TF32 and writing zeros outside the image and past C_in. That pass is shared-memory latency
//     only and runs while the consumers' wgmmas of earlier chunks are in flight. Conv row r, column j
//     of tap (kh, kw) is staged pixel (r + kh) * SWA + j + kw + 1: every tap is a descriptor offset.
//   - The weights are the register operand: per chunk each consumer thread loads its fragments of
//     the 9 taps (4 registers per tap) from the raw OIHW rows (the 304-byte row stride makes every
//     fragment load conflict-free) -- no transposition of the weights anywhere -- and each fragment
//     serves both conv rows and all 128 pixels of the tile.
//   - The 9 taps run as two commit groups (taps 0-4, 5-8), so the fragments of one half are
//     reloaded while the other half's wgmmas run (wait_group 1 between them): no extra registers,
//     and no drain per chunk except at a tile's end (wait_group 0, the epilogue).
//   - Three stages and mbarriers: fullb (the producer's lanes, after the transposition and a
//     fence.proxy.async), emptyb (one arrival per consumer warp once its wgmmas have read the stage).
//     (v9: the pixel copies run two chunks ahead on the producer's own fullb phases; see above.)
//   - Persistent blocks (grid = min(tiles, SM_COUNT)), one per SM; tiles are walked blockIdx.x, +
//     gridDim.x, ... in one flattened (tile, chunk) stream, so the next tile's first chunks are
//     staged under the current tile's last wgmmas.
// Rows that bulk copies cannot take (W not a multiple of VEC, x not 16-byte aligned; C_in not a
// multiple of CK or w not 16-byte aligned) take an element path in the producer with the same
// layouts and zeros outside every range: the pixels straight from global memory into the K-major
// operand, the weights element by element into the raw rows.
//
// Epilogue in registers (wgmma's accumulator layout: thread (warp w, lane g * 4 + t) of a warpgroup
// holds D rows 16w + g and 16w + g + 8 -- output channels -- and columns 8j + 2t, 8j + 2t + 1 --
// pixels): the two conv rows of a pooling window are the warpgroup's two accumulator tiles, its two
// columns two registers of the same thread. No shuffle: max, bias, ReLU, one store per pooled output.
//
// Compiled at run time by NVRTC for sm_90a (spec.yaml's launch.arch_specific). KS_T is the element
// type (float or __nv_bfloat16); BN (64 or 128 output channels per tile) is the tunable. Block: 384
// threads (warps 0-7: the two consumer warpgroups; 8-11: the producer warpgroup), registers split by
// setmaxnreg (v9: consumers CREGS = 200, producer 504 - 2 CREGS = 104 -- v8's 208 / 88 made the producer's three
// streams spill in bfloat16; the launch gives 168 to every thread).
// Dynamic shared memory: 3 * (8832 * (256 / BN + 2) + 304 * BN) + 128 bytes (spec.yaml's
// shared_bytes): 222848 (BN = 128) / 217472 (BN = 64) of the H200's 227 KiB per block.
// V8_WATCHDOG (default 1; not a tunable): an mbarrier wait that fails 2^26 times gives up (mbar_wait):
// a protocol bug ends the launch with wrong outputs instead of hanging the GPU.
#include <cuda_bf16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BN
#define BN 128
#endif
#ifndef CREGS
#define CREGS 200
#endif
#ifndef V8_WATCHDOG
#define V8_WATCHDOG 1
#endif
#define THREADS 384                         // two consumer warpgroups, one producer warpgroup

template <typename A, typename B> struct ks_same { static constexpr bool value = false; };
template <typename A> struct ks_same<A, A> { static constexpr bool value = true; };
template <int S> struct ks_raw;
template <> struct ks_raw<4> { typedef unsigned int type; };
template <> struct ks_raw<2> { typedef unsigned short type; };

constexpr int ES = sizeof(KS_T);            // element bytes
static_assert(ks_same<KS_T, float>::value || ks_same<KS_T, __nv_bfloat16>::value,
              "v8 supports float32 (as TF32) and bfloat16");
typedef ks_raw<ES>::type raw_t;
constexpr int VEC = 16 / ES;                // channels per 16-byte word (a core-matrix row's K)
constexpr int CK = 2 * VEC;                 // channels per chunk: 32 bytes = one wgmma k-step per tap
static_assert(BN == 64 || BN == 128, "64 or 128 output channels per tile");
constexpr int BW = 128;                     // conv columns per tile = wgmma n
constexpr int WGN = BN / 64;                // consumer warpgroups side by side over output channels
constexpr int WGR = 2 / WGN;                // ... over pooled rows
constexpr int ROWS = 2 * WGR;               // conv rows per tile
constexpr int SR = ROWS + 2;                // staged input rows (halo 1 above, 1 below)
constexpr int PT = 128;                     // producer threads
// registers per thread after setmaxnreg: the launch gives 168 to each of the 384 threads (65536 / 384,
// rounded down to 8); the producer warpgroup gives back 168 - PREGS, the consumers take CREGS - 168
constexpr int PREGS = 504 - 2 * CREGS;
static_assert(CREGS % 8 == 0 && PREGS % 8 == 0 && PREGS >= 24 && CREGS <= 256, "setmaxnreg counts");
constexpr int NS = 3;                       // stages
// raw pixel tile: [channel][staged row][XRW elements]; raw column rc is image column ow0 - VEC + rc
constexpr int XRW = 144;
constexpr int XR_BYTES = CK * SR * XRW * ES;              // 4608 * SR in both dtypes
static_assert(XR_BYTES == 4608 * SR, "raw tile size");
// K-major pixel operand: [kg][staged pixel sr * SWA + sc][16 bytes]; staged column sc is image
// column ow0 - 2 + sc (column 0 is never read: it keeps pixel pairs 8-byte aligned in the raw tile)
constexpr int SWA = BW + 4;
constexpr int NPIX = SR * SWA;
constexpr int XT_BYTES = 32 * NPIX;                       // 4224 * SR
constexpr int RC_OFF = VEC - 2;                           // raw column of staged column sc: sc + RC_OFF
static_assert(SWA - 1 + RC_OFF < XRW && BW + 2 * VEC <= XRW, "raw tile holds every staged column");
// raw weight rows: [output channel][WRS bytes]: the chunk's 288 bytes w[o][c0 .. c0 + CK - 1][0..8]
constexpr int WRS = 304;                                  // 76 words: conflict-free fragment loads
constexpr int WR_BYTES = WRS * BN;
constexpr int STAGE_BYTES = XR_BYTES + XT_BYTES + WR_BYTES;
constexpr int BAR_OFF = NS * STAGE_BYTES;
constexpr int SMEM_BYTES = BAR_OFF + 128;      // 12 mbarriers, then the watchdog flag (byte 96)
static_assert(SMEM_BYTES == 3 * (8832 * (256 / BN + 2) + 304 * BN) + 128, "spec.yaml shared_bytes formula");
static_assert(XR_BYTES % 128 == 0 && XT_BYTES % 128 == 0 && WR_BYTES % 128 == 0, "128-byte aligned regions");
static_assert(SMEM_BYTES <= 227 * 1024, "fits one H200 block");
// B descriptor (PTX ISA, "Matrix Descriptor"; K-major, no swizzle): LBO = bytes between core
// matrices adjacent in K (the two 16-byte halves of the chunk), SBO = between those adjacent in N
// (8 pixels); fields hold bytes >> 4
constexpr int LBO_B = NPIX * 16, SBO_B = 128;
static_assert((LBO_B >> 4) < (1 << 14), "14-bit descriptor field");
constexpr int NACC = BW / 2;                // accumulator registers per thread per conv row (m64n128)
constexpr int WRW = WRS / ES;               // weight row stride in elements (76 / 152)
constexpr int NPAIR = NPIX / 2;             // staged pixel pairs

__device__ __forceinline__ float ks_load(const float* p) { return *p; }
__device__ __forceinline__ float ks_load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void ks_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void ks_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// float32 -> nearest TF32, ties away from zero (the 13 low bits cleared), as v5-v7
__device__ __forceinline__ unsigned tf32_rna(unsigned u) { return (u + 0x1000u) & 0xffffe000u; }

// ---- mbarriers (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier")
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// arrive, and add `bytes` to the phase's expected transaction count (this lane's bulk copies)
__device__ __forceinline__ void mbar_arrive_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// wait until the phase of parity `parity` has completed (acquire). Watchdog: a wait that fails 2^26
// times marks the block broken (a flag word beside the barriers) and returns, as does every later
// wait of the block: a protocol bug ends the launch with wrong outputs instead of hanging the GPU.
// (Not __trap(): ptxas 13.0 then ignores setmaxnreg's larger register budget for the consumers.)
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity, volatile unsigned* broken) {
    unsigned done;
#if V8_WATCHDOG
    unsigned spins = 0;
#endif
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if V8_WATCHDOG
        if (!done && ((++spins & 0xFFFF) == 0) && (*broken || spins >= (1u << 26))) {
            *broken = 1u;
            done = 1;
        }
#endif
    } while (!done);
}
// bulk asynchronous copy global -> shared (16-byte aligned, a multiple of 16 bytes), completing
// `bytes` transactions on the mbarrier
__device__ __forceinline__ void bulk_copy(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// an accumulator read that stays after the wgmma wait before it (only wgmma writes them in the loop)
__device__ __forceinline__ float acc_read(float a) {
    float v;
    asm volatile("mov.b32 %0, %1;\n" : "=f"(v) : "f"(a));
    return v;
}

#define KS_D8(b) "+f"(d[b + 0]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), "+f"(d[b + 4]), "+f"(d[b + 5]), \
                 "+f"(d[b + 6]), "+f"(d[b + 7])
#define KS_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "

// D (64 x 128, float32, this thread's 64 registers) = A (64 x k, 4 registers: the weights) *
// B (k x 128, descriptor: the pixels) + (acc ? D : 0)
__device__ __forceinline__ void wgmma_rs(float* d, const unsigned* a, unsigned long long db, int acc) {
    if constexpr (ES == 4) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " KS_R64 "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                     : KS_D8(0), KS_D8(8), KS_D8(16), KS_D8(24), KS_D8(32), KS_D8(40), KS_D8(48), KS_D8(56)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " KS_R64 "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
                     : KS_D8(0), KS_D8(8), KS_D8(16), KS_D8(24), KS_D8(32), KS_D8(40), KS_D8(48), KS_D8(56)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc));
    }
}

// The tile of index t (column tile fastest, then pooled-row tile, then image x output-channel tile)
struct Tile {
    int n, k0, ph0, ow0;
};
__device__ __forceinline__ Tile decode(long long t, int ctiles, int rtiles, int ktiles) {
    Tile r;
    r.ow0 = (int)(t % ctiles) * BW;
    r.ph0 = (int)((t / ctiles) % rtiles) * WGR;
    const long long bz = t / ((long long)ctiles * rtiles);
    r.n = (int)(bz / ktiles);
    r.k0 = (int)(bz % ktiles) * BN;
    return r;
}

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
// grid: (min(tiles, SM_COUNT), 1, 1), tiles = cdiv(PW, 64) * cdiv(PH, WGR) * N * cdiv(K, BN);
// block: THREADS; dynamic shared: SMEM_BYTES.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
conv_relu_maxpool_wgmma_decoupled(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                              KS_T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ctiles = (PW + BW / 2 - 1) / (BW / 2), rtiles = (PH + WGR - 1) / WGR, ktiles = (K + BN - 1) / BN;
    const long long ntiles = (long long)ctiles * rtiles * N * ktiles;
    if ((long long)blockIdx.x >= ntiles) return;
    const int nchunks = (C + CK - 1) / CK;
    const unsigned sbase = smem_addr(smem);
    // barriers: xb[s] (pixel bytes + producer arrivals), wb[s] (weight bytes + producer arrivals),
    // fullb[s] (K-major operand ready), emptyb[s] (stage free)
    const unsigned bar0 = sbase + BAR_OFF;
    auto xb = [&](int s) { return bar0 + 8 * s; };
    auto wb = [&](int s) { return bar0 + 8 * (NS + s); };
    auto fullb = [&](int s) { return bar0 + 8 * (2 * NS + s); };
    auto emptyb = [&](int s) { return bar0 + 8 * (3 * NS + s); };
    volatile unsigned* broken = reinterpret_cast<volatile unsigned*>(smem + BAR_OFF + 8 * 4 * NS);
    if (tid == 0) {
        *broken = 0u;
        for (int s = 0; s < NS; ++s) {
            mbar_init(xb(s), PT);
            mbar_init(wb(s), PT);
            mbar_init(fullb(s), PT);
            mbar_init(emptyb(s), 8);              // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();                              // the last block-wide barrier: roles split here
    const long long my_tiles = (ntiles - 1 - blockIdx.x) / gridDim.x + 1;
    const long long total = my_tiles * nchunks;  // (tile, chunk) iterations of this block

    if (warp >= 8) {
        // ================= producer: copies and the K-major pixel operand =================
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PREGS));
        const int pl = tid - 256;                 // producer thread 0 .. PT - 1
        const raw_t* xr = reinterpret_cast<const raw_t*>(x);
        const raw_t* wr = reinterpret_cast<const raw_t*>(w);
        const long long HW = (long long)H * W;
        const bool x_vec = (W % VEC == 0) && ((reinterpret_cast<unsigned long long>(x) & 15) == 0);
        const bool w_vec = (C % CK == 0) && ((reinterpret_cast<unsigned long long>(w) & 15) == 0);
        // three streams over the block's flattened (tile, chunk) sequence: pixel copies, weight copies and
        // the transposition; each with its tile index, decoded tile (decoded once per tile, as v8 does: a
        // decode is six 64-bit divisions), chunk, stage and the stage's use count
        struct Stream {
            Tile tl;
            long long t;
            int c, s;
            unsigned u;
        };
        Stream px{decode(blockIdx.x, ctiles, rtiles, ktiles), blockIdx.x, 0, 0, 0u}, wt = px, tr = px;
        auto advance = [&](Stream& q) {
            if (++q.c == nchunks) {
                q.c = 0;
                q.t += gridDim.x;
                if (q.t < ntiles) q.tl = decode(q.t, ctiles, rtiles, ktiles);
            }
            if (++q.s == NS) { q.s = 0; ++q.u; }
        };
        // the pixels of chunk px: once every producer thread has transposed the chunk this stage held before
        // (its fullb phase), the raw tile is free -- the consumers never read it
        auto copy_pixels = [&]() {
            if (px.u >= 1) mbar_wait(fullb(px.s), (px.u - 1) & 1, broken);
            const Tile tc = px.tl;
            const unsigned xs_a = sbase + px.s * STAGE_BYTES;
            const int c0 = px.c * CK;
            const int ih0 = 2 * tc.ph0 - 1;
            const int ca = max(tc.ow0 - VEC, 0), cb = min(tc.ow0 + BW + VEC, W);   // copied columns
            const raw_t* xn = xr + (long long)tc.n * C * HW;
            unsigned bytes = 0;               // this lane's bulk bytes (expected on xb first)
            if (x_vec && cb > ca) {
#pragma unroll 1
                for (int q = pl; q < CK * SR; q += PT) {
                    const int c = q / SR, sr = q - c * SR, ih = ih0 + sr;
                    if (c0 + c < C && ih >= 0 && ih < H) bytes += (cb - ca) * ES;
                }
            }
            mbar_arrive_tx(xb(px.s), bytes);
            if (x_vec && cb > ca) {
#pragma unroll 1
                for (int q = pl; q < CK * SR; q += PT) {
                    const int c = q / SR, sr = q - c * SR, ih = ih0 + sr;
                    if (c0 + c < C && ih >= 0 && ih < H)
                        bulk_copy(xs_a + ((c * SR + sr) * XRW + ca - (tc.ow0 - VEC)) * ES,
                                  xn + (long long)(c0 + c) * HW + (long long)ih * W + ca, (cb - ca) * ES, xb(px.s));
                }
            }
            advance(px);
        };
        // the weights of chunk wt: once the consumers have emptied its stage
        auto copy_weights = [&]() {
            if (wt.u >= 1) mbar_wait(emptyb(wt.s), (wt.u - 1) & 1, broken);
            const int k0 = wt.tl.k0;
            const unsigned wr_a = sbase + wt.s * STAGE_BYTES + XR_BYTES + XT_BYTES;
            const int c0 = wt.c * CK;
            unsigned bytes = 0;
            if (w_vec) {
#pragma unroll 1
                for (int o = pl; o < BN; o += PT)
                    if (k0 + o < K) bytes += 288;
            } else {                          // element path (before the arrival: it releases them): zeros past C_in and K
                raw_t* wd = reinterpret_cast<raw_t*>(smem + wt.s * STAGE_BYTES + XR_BYTES + XT_BYTES);
#pragma unroll 1
                for (int e = pl; e < BN * CK * 9; e += PT) {
                    const int o = e / (CK * 9), f = e - o * (CK * 9), oo = k0 + o;
                    wd[o * WRW + f] = (oo < K && c0 + f / 9 < C) ? wr[((long long)oo * C + c0) * 9 + f] : (raw_t)0;
                }
            }
            mbar_arrive_tx(wb(wt.s), bytes);
            if (w_vec) {
#pragma unroll 1
                for (int o = pl; o < BN; o += PT)
                    if (k0 + o < K)
                        bulk_copy(wr_a + o * WRS, wr + ((long long)(k0 + o) * C + c0) * 9, 288, wb(wt.s));
            }
            advance(wt);
        };
        // chunk tr: raw tile -> K-major operand (pairs of staged pixels), then fullb. Its stage was emptied
        // by the consumers before this thread's copy_weights of the same chunk returned.
        auto transpose_chunk = [&]() {
            const Tile tt = tr.tl;
            unsigned char* xs = smem + tr.s * STAGE_BYTES;
            unsigned char* xt = xs + XR_BYTES;
            const int c0 = tr.c * CK;
            const int ih0 = 2 * tt.ph0 - 1, iw0 = tt.ow0 - 2;
            mbar_wait(xb(tr.s), tr.u & 1, broken);
            const raw_t* xn = xr + (long long)tt.n * C * HW;
#pragma unroll 1
            for (int pp = pl; pp < NPAIR; pp += PT) {
                const int sr = pp / (SWA / 2), sc = 2 * (pp - sr * (SWA / 2));
                const int ih = ih0 + sr, iw = iw0 + sc;
                const bool rok = ih >= 0 && ih < H;
                const bool ok0 = rok && iw >= 0 && iw < W, ok1 = rok && iw + 1 >= 0 && iw + 1 < W;
                unsigned wd[2][2][4];        // [pixel][kg][register]
                if (x_vec) {
                    const unsigned char* src = xs + (sr * XRW + sc + RC_OFF) * ES;
                    if constexpr (ES == 4) {
#pragma unroll
                        for (int c = 0; c < CK; ++c) {      // one 8-byte load: the pair's channel c
                            const uint2 v = *reinterpret_cast<const uint2*>(src + c * (SR * XRW * 4));
                            const bool cin = c0 + c < C;
                            wd[0][c / 4][c % 4] = (ok0 && cin) ? tf32_rna(v.x) : 0u;
                            wd[1][c / 4][c % 4] = (ok1 && cin) ? tf32_rna(v.y) : 0u;
                        }
                    } else {
#pragma unroll
                        for (int c = 0; c < CK; c += 2) {   // channels c, c + 1: one 4-byte load each
                            unsigned v0 = *reinterpret_cast<const unsigned*>(src + c * (SR * XRW * 2));
                            unsigned v1 = *reinterpret_cast<const unsigned*>(src + (c + 1) * (SR * XRW * 2));
                            if (c0 + c >= C) v0 = 0u;
                            if (c0 + c + 1 >= C) v1 = 0u;
                            const unsigned p0 = __byte_perm(v0, v1, 0x5410), p1 = __byte_perm(v0, v1, 0x7632);
                            wd[0][c / 8][(c % 8) / 2] = ok0 ? p0 : 0u;
                            wd[1][c / 8][(c % 8) / 2] = ok1 ? p1 : 0u;
                        }
                    }
                } else {                      // element path: straight from global memory
                    const raw_t* src = xn + (long long)c0 * HW + (long long)ih * W + iw;
#pragma unroll
                    for (int p = 0; p < 2; ++p) {
                        const bool ok = p ? ok1 : ok0;
#pragma unroll
                        for (int kg = 0; kg < 2; ++kg)
#pragma unroll
                            for (int r = 0; r < 4; ++r) {
                                unsigned u = 0;
#pragma unroll
                                for (int k = 0; k < 4 / ES; ++k) {
                                    const int c = kg * VEC + r * (4 / ES) + k;   // local channel
                                    const unsigned v = (ok && c0 + c < C) ? (unsigned)src[c * HW + p] : 0u;
                                    u |= v << (16 * k);
                                }
                                wd[p][kg][r] = ES == 4 ? tf32_rna(u) : u;
                            }
                    }
                }
                // store q writes pixel q ^ flip of the pair: lanes 4-7 of each 8-lane phase take the other
                // pixel, so a phase's eight 16-byte stores fill eight different bank groups
                const int flip = (pl >> 2) & 1;
#pragma unroll
                for (int kg = 0; kg < 2; ++kg)
#pragma unroll
                    for (int r = 0; r < 4; ++r) {
                        const unsigned a0 = wd[0][kg][r], a1 = wd[1][kg][r];
                        wd[0][kg][r] = flip ? a1 : a0;
                        wd[1][kg][r] = flip ? a0 : a1;
                    }
#pragma unroll
                for (int kg = 0; kg < 2; ++kg)
#pragma unroll
                    for (int q = 0; q < 2; ++q)
                        *reinterpret_cast<uint4*>(xt + (kg * NPIX + 2 * pp + (q ^ flip)) * 16) =
                            make_uint4(wd[q][kg][0], wd[q][kg][1], wd[q][kg][2], wd[q][kg][3]);
            }
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // for wgmma's reads
            mbar_arrive(fullb(tr.s));
            advance(tr);
        };
        if (total > 0) copy_pixels();             // chunks 0 and 1: nothing to wait for yet (total: 0 when C_in = 0)
        if (total > 1) copy_pixels();
#pragma unroll 1
        for (long long j = 0; j < total; ++j) {
            if (j + 2 < total) copy_pixels();     // chunk j + 2 (waits for chunk j - 1's transposition)
            copy_weights();                       // chunk j (waits for chunk j - 3's consumers)
            transpose_chunk();                    // chunk j (waits for its pixels)
        }
        return;
    }

    // ================= consumers: two warpgroups, wgmma only =================
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CREGS));
    const int wg = warp >> 2, wq = warp & 3;
    const int g = lane >> 2, t = lane & 3;
    const int oc = 64 * (wg % WGN) + 16 * wq + g;   // local output channel of fragment row g
    const int rr0 = 2 * (wg / WGN);                 // the warpgroup's first conv row in the tile
    // this lane's fragment element offset inside a raw weight row block (elements): row oc, channel
    // t (TF32: a0 / a2 channels t / t + 4) or 2t (bfloat16: registers 0 / 2 channels 2t, 2t + 1 / + 8)
    const int fbase = oc * WRW + (ES == 4 ? 9 * t : 18 * t);
    // B descriptor of stage 0, conv row 0, tap (0, 0): staged pixel rr0 * SWA + 1
    const unsigned long long b_desc0 = ((unsigned long long)(LBO_B >> 4) << 16) | ((unsigned long long)(SBO_B >> 4) << 32) |
                                       ((((sbase + XR_BYTES) >> 4) + (unsigned)(rr0 * SWA + 1)) & 0x3FFF);
    float acc[2][NACC];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr)
#pragma unroll
        for (int i = 0; i < NACC; ++i) acc[rr][i] = 0.f;
    unsigned fr[9][4];                              // the chunk's weight fragments, per tap

    // fragments of taps T0 .. T1 - 1 from stage s's raw weight rows
    auto load_frags = [&](int s, int T0, int T1) {
        const raw_t* wrs = reinterpret_cast<const raw_t*>(smem + s * STAGE_BYTES + XR_BYTES + XT_BYTES) + fbase;
#pragma unroll
        for (int tap = 0; tap < 9; ++tap) {
            if (tap < T0 || tap >= T1) continue;
#pragma unroll
            for (int r = 0; r < 4; ++r) {           // r & 1: row + 8; r >> 1: K + half
                if constexpr (ES == 4) {
                    fr[tap][r] = tf32_rna(wrs[(r & 1) * 8 * WRW + (r >> 1) * 4 * 9 + tap]);
                } else {
                    const int e = (r & 1) * 8 * WRW + (r >> 1) * 8 * 9 + tap;   // channel 2t (+ 8), tap
                    fr[tap][r] = __byte_perm((unsigned)wrs[e], (unsigned)wrs[e + 9], 0x5410);
                }
            }
        }
    };
    // taps T0 .. T1 - 1 of both conv rows from stage s
    auto issue = [&](int s, int T0, int T1, bool first_chunk) {
        unsigned long long db0 = b_desc0 + (unsigned)(s * (STAGE_BYTES / 16));
        asm volatile("" : "+l"(db0));               // opaque: no 18 live loop-invariant descriptors
#pragma unroll
        for (int tap = 0; tap < 9; ++tap) {
            if (tap < T0 || tap >= T1) continue;
            const int kh = tap / 3, kw = tap % 3;
#pragma unroll
            for (int rr = 0; rr < 2; ++rr)
                wgmma_rs(acc[rr], fr[tap], db0 + (unsigned)((rr + kh) * SWA + kw), tap > 0 || !first_chunk);
        }
    };
    auto release = [&](int s) {                     // this warp's wgmmas no longer read stage s
        __syncwarp();
        if (lane == 0) mbar_arrive(emptyb(s));
    };

    int s = 0;
    unsigned u = 0;                                 // use count of stage s
#pragma unroll 1
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const Tile tl = decode(tile, ctiles, rtiles, ktiles);
        int prev_s = 0;
#pragma unroll 1
        for (int ch = 0; ch < nchunks; ++ch) {
            if (ch == 0) {
                mbar_wait(fullb(s), u & 1, broken);
                mbar_wait(wb(s), u & 1, broken);
                load_frags(s, 0, 5);
            }
            wgmma_fence();
            issue(s, 0, 5, ch == 0);
            wgmma_commit();
            if (ch > 0) {
                wgmma_wait<1>();                    // taps 5-8 of the previous chunk done
                release(prev_s);
            }
            load_frags(s, 5, 9);
            wgmma_fence();
            issue(s, 5, 9, ch == 0);
            wgmma_commit();
            const int ns = s == NS - 1 ? 0 : s + 1;
            const unsigned nu = s == NS - 1 ? u + 1 : u;
            if (ch < nchunks - 1) {
                mbar_wait(fullb(ns), nu & 1, broken);
                mbar_wait(wb(ns), nu & 1, broken);
                wgmma_wait<1>();                    // taps 0-4 of this chunk done: their registers free
                load_frags(ns, 0, 5);
            }
            prev_s = s;
            s = ns;
            u = nu;
        }
        // the tile's last chunk: drain (after the loop, so that ptxas sees every path waited), free its stage
        wgmma_wait<0>();
        release(prev_s);
        // ---- epilogue: 2x2 max (rows: the two accumulator tiles, columns: registers i, i + 1), bias, ReLU
        const int ph = tl.ph0 + wg / WGN;
        KS_T* yrow = y + (((long long)tl.n * K) * PH + ph) * PW;
        const int o0 = tl.k0 + oc;
        const float b0 = o0 < K ? ks_load(b + o0) : 0.f, b1 = o0 + 8 < K ? ks_load(b + o0 + 8) : 0.f;
#pragma unroll
        for (int i = 0; i < NACC; i += 2) {
            // register i: D row 16 wq + g + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2t (+ 1 for i + 1)
            float v = fmaxf(fmaxf(acc_read(acc[0][i]), acc_read(acc[1][i])),
                            fmaxf(acc_read(acc[0][i + 1]), acc_read(acc[1][i + 1])));
            const int hi = (i >> 1) & 1;
            const int k = o0 + 8 * hi;
            const int pw = (tl.ow0 >> 1) + 4 * (i >> 2) + t;
            if (k < K && pw < PW && ph < PH)
                ks_store(yrow + (long long)k * PH * PW + pw, fmaxf(v + (hi ? b1 : b0), 0.f));
        }
    }
    wgmma_wait<0>();
}
