// softmax_backward v2: native CUDA, one block per row, 16-byte vector loads, rows cached in registers.
//
// Each thread reads its part of y and dy in 16-byte vectors (8 bfloat16 or 4 float32 per load
// instruction), keeps its first CACHE elements of both as float32 in registers and accumulates
// dot = sum(dy * y). The block's partial dots are combined with warp shuffles (__shfl_xor_sync)
// and one shared slot per warp; then every thread writes y * (dy - dot) from its registers as
// 16-byte vectors. Rows up to CACHE * BLOCK elements read y and dy once: 3 * M * N * itemsize
// bytes; the part of a longer row beyond the cache is read again (from L2 while the row is
// fresh). Small blocks (128-256 threads) keep several rows in flight per SM. Rows whose length is
// not a multiple of VEC (or unaligned pointers) take the same code with one element per access.
//
// Compiled by NVRTC; KS_T is the element type, BLOCK (threads per block, a multiple of 32) and
// CACHE (cached elements per thread and tensor, a multiple of 8: the same registers in every
// dtype) are tunables.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef CACHE
#define CACHE 16
#endif

constexpr int VEC = 16 / sizeof(KS_T);
constexpr int WARPS = BLOCK / 32;

__device__ __forceinline__ float ks_f(float v) { return v; }
__device__ __forceinline__ float ks_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ks_f(__half v) { return __half2float(v); }
__device__ __forceinline__ void ks_set(float& d, float v) { d = v; }
__device__ __forceinline__ void ks_set(__nv_bfloat16& d, float v) { d = __float2bfloat16(v); }
__device__ __forceinline__ void ks_set(__half& d, float v) { d = __float2half(v); }

template <int W>
__device__ __forceinline__ void load_unit(const KS_T* __restrict__ p, float* v) {
    if constexpr (W == 1) {
        v[0] = ks_f(p[0]);
    } else {
        uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
        const KS_T* e = reinterpret_cast<const KS_T*>(&raw);
#pragma unroll
        for (int i = 0; i < W; ++i) v[i] = ks_f(e[i]);
    }
}

template <int W>
__device__ __forceinline__ void store_unit(KS_T* __restrict__ p, const float* v) {
    if constexpr (W == 1) {
        ks_set(p[0], v[0]);
    } else {
        uint4 raw;
        KS_T* e = reinterpret_cast<KS_T*>(&raw);
#pragma unroll
        for (int i = 0; i < W; ++i) ks_set(e[i], v[i]);
        *reinterpret_cast<uint4*>(p) = raw;
    }
}

template <int W>
__device__ __forceinline__ void load_pair(const KS_T* __restrict__ yr, const KS_T* __restrict__ gr, long long o,
                                          float* y, float* g, float& dot) {
    load_unit<W>(yr + o, y);
    load_unit<W>(gr + o, g);
#pragma unroll
    for (int i = 0; i < W; ++i) dot = fmaf(g[i], y[i], dot);
}

template <int W>
__device__ __forceinline__ void store_grad(const float* y, const float* g, KS_T* __restrict__ dxr, long long o,
                                           float dot) {
    float out[W];
#pragma unroll
    for (int i = 0; i < W; ++i) out[i] = y[i] * (g[i] - dot);
    store_unit<W>(dxr + o, out);
}

template <int W>
__device__ __forceinline__ void softmax_backward_row(const KS_T* __restrict__ yr, const KS_T* __restrict__ gr,
                                                     KS_T* __restrict__ dxr, int N, float* red) {
    static_assert(CACHE % 8 == 0, "CACHE must be a multiple of 8 (whole 16-byte vectors in every dtype)");
    constexpr int UNITS = CACHE / W;
    const int n_units = N / W;
    const int tid = threadIdx.x;
    float yc[UNITS][W], gc[UNITS][W];
    float dot = 0.f;
#pragma unroll
    for (int c = 0; c < UNITS; ++c) {
        int u = c * BLOCK + tid;
        if (u < n_units) load_pair<W>(yr, gr, (long long)u * W, yc[c], gc[c], dot);
    }
    for (int u = UNITS * BLOCK + tid; u < n_units; u += BLOCK) {
        float y[W], g[W];
        load_pair<W>(yr, gr, (long long)u * W, y, g, dot);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    const int warp = tid / 32, lane = tid % 32;
    if (lane == 0) red[warp] = dot;
    __syncthreads();
    if (warp == 0) {
        dot = lane < WARPS ? red[lane] : 0.f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
        if (lane == 0) red[0] = dot;
    }
    __syncthreads();
    dot = red[0];
#pragma unroll
    for (int c = 0; c < UNITS; ++c) {
        int u = c * BLOCK + tid;
        if (u < n_units) store_grad<W>(yc[c], gc[c], dxr, (long long)u * W, dot);
    }
    for (int u = UNITS * BLOCK + tid; u < n_units; u += BLOCK) {
        float y[W], g[W], unused = 0.f;
        load_pair<W>(yr, gr, (long long)u * W, y, g, unused);
        store_grad<W>(y, g, dxr, (long long)u * W, dot);
    }
}

// y, dy, dx: (M, N) contiguous. grid: (M); block: (BLOCK).
extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_backward_vec(const KS_T* __restrict__ y, const KS_T* __restrict__ dy, KS_T* __restrict__ dx, int M, int N) {
    __shared__ float red[WARPS];
    const long long row = blockIdx.x;
    if (row >= M) return;
    const unsigned long long align = reinterpret_cast<unsigned long long>(y) | reinterpret_cast<unsigned long long>(dy)
                                     | reinterpret_cast<unsigned long long>(dx);
    if (N % VEC == 0 && (align & 15) == 0)   // uniform per launch: no divergence
        softmax_backward_row<VEC>(y + row * N, dy + row * N, dx + row * N, N, red);
    else
        softmax_backward_row<1>(y + row * N, dy + row * N, dx + row * N, N, red);
}
