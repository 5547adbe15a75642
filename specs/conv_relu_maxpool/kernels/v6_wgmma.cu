// conv_relu_maxpool v6: Hopper warpgroup MMA (wgmma.mma_async, sm_90a) implicit GEMM fed by a 2- or
// 3-stage cp.async pipeline, with the pooling epilogue in registers.
//
// The convolution is a GEMM: M = conv output pixels, N = output channels, K = C_in x 9 taps. A
// block owns one pooled row ph of one image (conv rows 2ph and 2ph+1), BW conv columns and BN output
// channels. It has BW / 64 warpgroups of 128 threads; warpgroup j owns conv columns 64j .. 64j + 63
// of both conv rows, i.e. two m64nBN accumulator tiles (BN / 2 float32 registers each per thread).
// K is walked in chunks of 32 bytes of input channels (CK = 8 float32 or 16 bfloat16 channels);
// inside a chunk K runs in the weights' own OIHW order, k = c * 9 + tap (CK * 9 = 72 / 144 values,
// 288 bytes), nine wgmma k-steps of 32 bytes (k8 TF32, k16 bfloat16) per conv row.
//
// What changes against v5 (mma.sync m16n8k8 / m16n8k16 from raw tiles):
//   - the B operand (weights) is read by the tensor cores from shared memory through a wgmma matrix
//     descriptor: no B fragment registers and no B load instructions. Each 288-byte weight row of a
//     chunk is copied by eighteen 16-byte cp.async straight into the descriptor's no-swizzle
//     K-major layout -- core matrices of 8 output channels x 16 bytes (128 contiguous bytes), the
//     eighteen 16-byte pieces of a row being the core matrices adjacent in K (LBO = 128 bytes), the
//     groups of 8 output channels the ones adjacent in N (SBO = 18 * 128 = 2304 bytes);
//   - the A operand (pixels) stays in registers (wgmma's register-A form), loaded from the raw
//     [channel][row][column] input tile as in v5; because K runs c * 9 + tap, each lane's four
//     fragment elements of a k-step sit at offsets koff(k) = (k / 9) * CS + (k % 9 / 3) * SWS + k % 3
//     that depend on its lane (t = lane % 4), computed once per thread before the chunk loop;
//     the row stride SWS (float32: the staged width + 4 words) makes every such load conflict-free
//     (tests/test_conv_v6_emulation.py checks all of them);
//   - one wgmma per conv row per k-step does 64 x BN x k (v5: 16 x 8 x k per mma.sync), issued
//     asynchronously: k-step s + 1's A fragments are loaded while k-step s runs (wgmma.commit_group
//     after each k-step, wgmma.wait_group 1 before the next), so the issue rate of mma.sync and
//     the accumulators' fixed-latency dependencies stop being the limit.
// Float32 operands are rounded to the nearest TF32 (ties away: add half a TF32 ulp, clear the 13
// low bits): A in registers after its load, B in place in shared memory by the thread that copied
// it, after its copy lands. Rows that are not 16-byte multiples (odd W, C_in % CK != 0, misaligned
// pointers) take an element path that fills the same layouts, with zeros outside the image and the
// channel / output-channel ranges, so every shape is exact.
//
// Ordering: chunk i is waited for (cp.async.wait_group), made visible to the async proxy that
// wgmma's descriptor reads go through (fence.proxy.async.shared::cta) and published by one
// barrier; each warpgroup then issues its 18 wgmmas (wgmma.fence before each k-step: its A
// registers were just written) and waits for all of them (wgmma.wait_group 0) before the next
// barrier, after which chunk i's buffer is refilled with chunk i + STAGES.
//
// Epilogue in registers (wgmma's accumulator layout: thread (warp w, lane g * 4 + t) holds pixel
// rows 16w + g and 16w + g + 8, output channels 8j + 2t, 8j + 2t + 1): the two conv rows of a
// pooling window are the two accumulator tiles of the same thread, the two columns lanes l and
// l ^ 4 (one shuffle); add the bias, ReLU, and one store per pooled output.
//
// Compiled at run time by NVRTC for sm_90a (spec.yaml's launch.arch_specific: wgmma exists only in
// the arch-specific target). KS_T is the element type (float or __nv_bfloat16); BW (conv columns
// per block: 64 or 128), BN (output channels per block: 64 or 128) and STAGES (2 or 3) are tunables.
// Dynamic shared memory: STAGES * (128 * BW + 288 * BN + 2048) bytes (spec.yaml's shared_bytes).
// V6_DESC_SWAP=1 (not a tunable; bench/conv_v6_probe.py's diagnosis only) exchanges the
// descriptor's two stride fields.
#include <cuda_bf16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BW
#define BW 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef V6_DESC_SWAP
#define V6_DESC_SWAP 0
#endif
#define THREADS (2 * BW)                    // BW / 64 warpgroups of 128 threads

template <typename A, typename B> struct ks_same { static constexpr bool value = false; };
template <typename A> struct ks_same<A, A> { static constexpr bool value = true; };
template <int S> struct ks_raw;
template <> struct ks_raw<4> { typedef unsigned int type; };
template <> struct ks_raw<2> { typedef unsigned short type; };

constexpr int ES = sizeof(KS_T);            // element bytes
static_assert(ks_same<KS_T, float>::value || ks_same<KS_T, __nv_bfloat16>::value,
              "v6 supports float32 (as TF32) and bfloat16");
typedef ks_raw<ES>::type raw_t;
constexpr int VEC = 16 / ES;                // elements per 16-byte copy
constexpr int CK = 32 / ES;                 // input channels per chunk
constexpr int KC = CK * 9;                  // K values per chunk (72 / 144): 288 bytes
constexpr int KSTEP = 32 / ES;              // wgmma k (8 TF32 / 16 bfloat16): 32 bytes
constexpr int NSTEP = KC / KSTEP;           // k-steps per chunk: 9
static_assert(NSTEP == 9, "nine k-steps per chunk");
constexpr int SWC = BW + 2 * VEC;           // staged columns per input row: ow0-VEC .. ow0+BW+VEC-1
constexpr int SCH = SWC / VEC;              // 16-byte copies per staged input row
constexpr int SWS = SWC + (ES == 4 ? 4 : 0);  // row stride (elements): conflict-free A loads
constexpr int CS = 4 * SWS;                 // channel stride (elements): 4 staged rows
static_assert((SWS * ES) % 16 == 0 && (CS * ES) % 16 == 0, "16-byte aligned staged rows");
constexpr int XST = 128 * BW + 2048;        // staged input bytes per stage (both dtypes fit)
static_assert(CK * CS * ES <= XST, "staged input fits its stage");
constexpr int WPIECES = KC * ES / 16;       // 16-byte pieces per weight row of a chunk: 18
static_assert(WPIECES == 18, "288-byte weight rows");
constexpr int CORE = 128;                   // bytes per core matrix (8 rows x 16 bytes)
constexpr int LBO = CORE;                   // K-adjacent core matrices
constexpr int SBO = WPIECES * CORE;         // N-adjacent core matrices (groups of 8 output channels)
constexpr int WST = BN * KC * ES;           // staged weight bytes per stage (= 288 * BN)
constexpr int STAGE_BYTES = XST + WST;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;
static_assert(SMEM_BYTES == STAGES * (128 * BW + 288 * BN + 2048), "spec.yaml shared_bytes formula");
static_assert(XST % 128 == 0 && WST % 128 == 0, "128-byte aligned operand tiles");
static_assert(STAGES == 2 || STAGES == 3, "two or three stages");
static_assert(BW == 64 || BW == 128, "one or two warpgroups");
static_assert(BN == 64 || BN == 128, "wgmma n = BN");
constexpr int NACC = BN / 2;                // accumulator registers per thread per conv row
// blocks per SM to ask registers for: 1 for BN = 128 (128 accumulators per thread), else 2, and no
// more than the shared memory admits (228 KiB per SM, 1 KiB reserved per block)
constexpr int MINB_SMEM = 233472 / (SMEM_BYTES + 1024);
constexpr int MINB_REGS = (BN == 128) ? 1 : 2;
constexpr int MINB = MINB_SMEM < MINB_REGS ? (MINB_SMEM < 1 ? 1 : MINB_SMEM) : MINB_REGS;

__device__ __forceinline__ float ks_load(const float* p) { return *p; }
__device__ __forceinline__ float ks_load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ void ks_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void ks_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

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
// float32 -> nearest TF32, ties away from zero (the 13 low bits cleared); CUTLASS's
// round_half_ulp_truncate without its Inf/NaN test (it only changes NaN payloads in those bits)
__device__ __forceinline__ unsigned tf32_rna(unsigned u) { return (u + 0x1000u) & 0xffffe000u; }

// wgmma shared-memory matrix descriptor: start address, LBO, SBO (all >> 4), no swizzle (bits 62-63 = 0)
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr) {
    constexpr unsigned long long lead = (V6_DESC_SWAP ? SBO : LBO) >> 4;
    constexpr unsigned long long stride = (V6_DESC_SWAP ? LBO : SBO) >> 4;
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (lead << 16) | (stride << 32);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// keeps the compiler from moving accumulator reads or writes across a wgmma wait
__device__ __forceinline__ void fence_acc(float* d) {
#pragma unroll
    for (int i = 0; i < NACC; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D (64 x BN, float32, this thread's NACC registers) += A (64 x k, 4 registers) * B (k x BN, descriptor)
__device__ __forceinline__ void wgmma_step(float* d, const unsigned* a, unsigned long long desc) {
#if BN == 64
    if constexpr (ES == 4) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                     "{%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                     "{%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
    }
#else
    if constexpr (ES == 4) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                     "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                     "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
    }
#endif
}

// K offset (elements) inside a staged input tile of chunk-local K index k = c * 9 + kh * 3 + kw
__device__ __forceinline__ int koff(int k) {
    const int c = k / 9, r = k - 9 * c, kh = r / 3;
    return c * CS + kh * SWS + (r - 3 * kh);
}

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
// grid: (cdiv(PW, BW / 2) * PH * N * cdiv(K, BN), 1, 1): column tile fastest, then the pooled
// row, then (image, output-channel tile) -- one-dimensional, as CUDA caps gridDim.y and .z at
// 65535; block: 2 * BW threads (BW / 64 warpgroups); dynamic shared: SMEM_BYTES.
extern "C" __global__ void __launch_bounds__(THREADS, MINB)
conv_relu_maxpool_wgmma(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                        KS_T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ctiles = (PW + BW / 2 - 1) / (BW / 2);  // column tiles (BW conv columns each)
    const long long bid = blockIdx.x;
    const int ow0 = (int)(bid % ctiles) * BW;     // first conv column of the tile
    const int ph = (int)((bid / ctiles) % PH);    // pooled row: conv rows 2ph, 2ph+1
    const long long bz = bid / ((long long)ctiles * PH);
    const int ktiles = (K + BN - 1) / BN;
    const int n = (int)(bz / ktiles), k0 = (int)(bz % ktiles) * BN;
    const int ih0 = 2 * ph - 1;                   // input row of staged row 0 (padding 1)
    const int gc0 = ow0 - VEC;                    // input column of staged column 0
    const raw_t* xn = reinterpret_cast<const raw_t*>(x) + (long long)n * C * H * W;
    const raw_t* wr = reinterpret_cast<const raw_t*>(w);
    // 16-byte copies need 16-byte rows: W a multiple of VEC (input), C a multiple of CK (weights).
    const bool x_vec = (W % VEC == 0) && ((reinterpret_cast<unsigned long long>(x) & 15) == 0);
    const bool w_vec = (C % CK == 0) && ((reinterpret_cast<unsigned long long>(w) & 15) == 0);
    const int nchunks = (C + CK - 1) / CK;

    // ---- stage chunk `chunk` into stage buffer `s` (zeros outside every range)
    auto stage = [&](int chunk, int s) {
        const int c0 = chunk * CK;
        unsigned char* xs = smem + s * STAGE_BYTES;
        unsigned char* ws = xs + XST;
        for (int q = tid; q < CK * 4 * SCH; q += THREADS) {   // input: [channel][row][column]
            const int sc = q % SCH, r = (q / SCH) % 4, c = q / (4 * SCH);
            const int ih = ih0 + r, cc = c0 + c, gcol = gc0 + sc * VEC;
            unsigned char* dst = xs + (c * CS + r * SWS + sc * VEC) * ES;
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
        // weights: core matrix (output channels 8j .. 8j + 7, piece p) at j * SBO + p * LBO, row
        // nn % 8 at + 16 (nn % 8): the copy index q is the destination's 16-byte slot
        for (int q = tid; q < BN * WPIECES; q += THREADS) {
            const int r8 = q % 8, p = (q / 8) % WPIECES, nn = (q / (8 * WPIECES)) * 8 + r8, kk = k0 + nn;
            unsigned char* dst = ws + q * 16;
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

    float acc[2][NACC];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr)
#pragma unroll
        for (int i = 0; i < NACC; ++i) acc[rr][i] = 0.f;

    const int wg = warp >> 2, wq = warp & 3;      // warpgroup, warp inside it
    const int g = lane >> 2, t = lane & 3;
    // A (pixels x K): fragment row g (+ 8) of warp wq is conv column 64 wg + 16 wq + g (+ 8), i.e.
    // staged column that + kw - 1 + VEC; register j of k-step s holds K index
    //   TF32: a0, a1: 8s + t; a2, a3: 8s + t + 4 (a1, a3: pixel + 8)
    //   bf16: a0, a1: 16s + 2t (low half), + 1 (high half); a2, a3: 16s + 2t + 8, + 9
    const int a_base = 64 * wg + 16 * wq + g + VEC - 1;
    constexpr int KA = 4 / ES;                    // K values per fragment register (1 or 2)
    int aoff[NSTEP][2 * KA];                      // koff of this lane's K values, per k-step
#pragma unroll
    for (int s = 0; s < NSTEP; ++s)
#pragma unroll
        for (int j = 0; j < 2 * KA; ++j)
            aoff[s][j] = koff(KSTEP * s + KA * t + (j / KA) * (KSTEP / 2) + (j % KA)) + a_base;

#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nchunks) stage(s, s);
        cp_async_commit();                        // one group per stage, empty or not
    }
#pragma unroll 1
    for (int i = 0; i < nchunks; ++i) {
        cp_async_wait_stage();                    // this thread's copies of chunk i have landed
        unsigned char* xst = smem + (i % STAGES) * STAGE_BYTES;
        if constexpr (ES == 4) {                  // round this thread's weight copies to TF32 in place
            uint4* wq4 = reinterpret_cast<uint4*>(xst + XST);
            for (int q = tid; q < BN * WPIECES; q += THREADS) {
                uint4 v = wq4[q];
                v.x = tf32_rna(v.x); v.y = tf32_rna(v.y); v.z = tf32_rna(v.z); v.w = tf32_rna(v.w);
                wq4[q] = v;
            }
        }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // visible to wgmma's reads
        __syncthreads();                          // chunk i visible to all; chunk i - 1's buffer free
        if (i + STAGES - 1 < nchunks) stage(i + STAGES - 1, (i + STAGES - 1) % STAGES);
        cp_async_commit();
        const raw_t* xs = reinterpret_cast<const raw_t*>(xst);
        const unsigned wbase = smem_addr(xst + XST);
#pragma unroll
        for (int s = 0; s < NSTEP; ++s) {
            // k-step s reads weight pieces 2s, 2s + 1 (32 bytes of K) of every output channel
            const unsigned long long desc = wgmma_desc(wbase + s * 2 * LBO);
            unsigned af[2][4];
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) {
                const raw_t* p = xs + rr * SWS;
#pragma unroll
                for (int h = 0; h < 2; ++h) {     // h: K half (a0, a1 | a2, a3)
                    if constexpr (ES == 4) {
                        af[rr][2 * h] = tf32_rna(p[aoff[s][h]]);
                        af[rr][2 * h + 1] = tf32_rna(p[aoff[s][h] + 8]);
                    } else {
                        af[rr][2 * h] = __byte_perm((unsigned)p[aoff[s][2 * h]], (unsigned)p[aoff[s][2 * h + 1]], 0x5410);
                        af[rr][2 * h + 1] =
                            __byte_perm((unsigned)p[aoff[s][2 * h] + 8], (unsigned)p[aoff[s][2 * h + 1] + 8], 0x5410);
                    }
                }
            }
            wgmma_fence();                        // A registers written above
            wgmma_step(acc[0], af[0], desc);
            wgmma_step(acc[1], af[1], desc);
            wgmma_commit();
            wgmma_wait<1>();                      // k-step s - 1 done: its A registers are free
        }
        wgmma_wait<0>();                          // chunk i's operands no longer read
        fence_acc(acc[0]);
        fence_acc(acc[1]);
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");  // no copy outlives the block

    // ---- epilogue: 2x2 max (rows: the two tiles, columns: lanes l, l ^ 4), bias, ReLU, one store
#pragma unroll
    for (int i = 0; i < NACC; ++i) {
        float v = fmaxf(acc[0][i], acc[1][i]);
        acc[0][i] = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
    }
    if (g & 1) return;
    KS_T* yrow = y + (((long long)n * K) * PH + ph) * PW;
#pragma unroll
    for (int i = 0; i < NACC; ++i) {
        // register i: pixel row 16 wq + g + 8 ((i >> 1) & 1), output channel 8 (i >> 2) + 2t + (i & 1)
        const int k = k0 + 8 * (i >> 2) + 2 * t + (i & 1);
        const int pw = (ow0 + 64 * wg + 16 * wq + g + 8 * ((i >> 1) & 1)) >> 1;
        if (k < K && pw < PW)
            ks_store(yrow + (long long)k * PH * PW + pw, fmaxf(acc[0][i] + ks_load(b + k), 0.f));
    }
}
