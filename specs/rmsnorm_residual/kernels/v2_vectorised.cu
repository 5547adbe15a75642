// rmsnorm_residual v2: native CUDA, one block per row, 16-byte vector loads, h cached in registers.
//
// Each thread reads its part of x and residual in 16-byte vectors (8 bfloat16 per load
// instruction; a warp moves 512 contiguous bytes per instruction and tensor), adds them in float32
// and keeps the first CACHE vectors of h in registers while accumulating sum(h^2). The block's
// partial sums are combined with warp shuffles (__shfl_xor_sync) and one shared slot per warp;
// then every thread scales its cached h by rsqrt(mean + eps) and weight (read as 16-byte vectors,
// from L2 after the first rows) and stores 16-byte vectors. Rows up to CACHE * VEC * BLOCK
// elements read x and residual once: 3 * M * N * itemsize bytes; the part of a longer row beyond
// the cache is read again (from L2 while the row is fresh). Rows whose length is not a multiple of
// VEC (or unaligned pointers) take the same code with one element per access.
//
// Compiled by NVRTC; KS_T is the element type, BLOCK (threads per block, a multiple of 32) and
// CACHE (cached 16-byte vectors per thread) are tunables.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef CACHE
#define CACHE 2
#endif

constexpr int VEC = 16 / sizeof(KS_T);
constexpr int WARPS = BLOCK / 32;
constexpr float EPS = 1e-6f;

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

// h = x + residual for the W elements at offset o, accumulating sum(h^2) into ss.
template <int W>
__device__ __forceinline__ void load_h(const KS_T* __restrict__ xr, const KS_T* __restrict__ rr, long long o,
                                       float* h, float& ss) {
    float r[W];
    load_unit<W>(xr + o, h);
    load_unit<W>(rr + o, r);
#pragma unroll
    for (int i = 0; i < W; ++i) {
        h[i] += r[i];
        ss = fmaf(h[i], h[i], ss);
    }
}

template <int W>
__device__ __forceinline__ void scale_store(const float* h, const KS_T* __restrict__ w, KS_T* __restrict__ yr,
                                            long long o, float rstd) {
    float wv[W], out[W];
    load_unit<W>(w + o, wv);
#pragma unroll
    for (int i = 0; i < W; ++i) out[i] = h[i] * rstd * wv[i];
    store_unit<W>(yr + o, out);
}

template <int W>
__device__ __forceinline__ void rmsnorm_row(const KS_T* __restrict__ xr, const KS_T* __restrict__ rr,
                                            const KS_T* __restrict__ w, KS_T* __restrict__ yr, int N, float* red) {
    constexpr int UNITS = CACHE * VEC / W;
    const int n_units = N / W;
    const int tid = threadIdx.x;
    float cache[UNITS][W];
    float ss = 0.f;
#pragma unroll
    for (int c = 0; c < UNITS; ++c) {
        int u = c * BLOCK + tid;
        if (u < n_units) load_h<W>(xr, rr, (long long)u * W, cache[c], ss);
    }
    for (int u = UNITS * BLOCK + tid; u < n_units; u += BLOCK) {
        float h[W];
        load_h<W>(xr, rr, (long long)u * W, h, ss);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
    const int warp = tid / 32, lane = tid % 32;
    if (lane == 0) red[warp] = ss;
    __syncthreads();
    if (warp == 0) {
        ss = lane < WARPS ? red[lane] : 0.f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
        if (lane == 0) red[0] = ss;
    }
    __syncthreads();
    const float rstd = rsqrtf(red[0] / (float)N + EPS);
#pragma unroll
    for (int c = 0; c < UNITS; ++c) {
        int u = c * BLOCK + tid;
        if (u < n_units) scale_store<W>(cache[c], w, yr, (long long)u * W, rstd);
    }
    for (int u = UNITS * BLOCK + tid; u < n_units; u += BLOCK) {
        float h[W], unused = 0.f;
        load_h<W>(xr, rr, (long long)u * W, h, unused);
        scale_store<W>(h, w, yr, (long long)u * W, rstd);
    }
}

// x, residual, y: (M, N) contiguous; w: (N,). grid: (M); block: (BLOCK).
extern "C" __global__ void __launch_bounds__(BLOCK)
rmsnorm_residual_vec(const KS_T* __restrict__ x, const KS_T* __restrict__ residual, const KS_T* __restrict__ w,
                     KS_T* __restrict__ y, int M, int N) {
    __shared__ float red[WARPS];
    const long long row = blockIdx.x;
    if (row >= M) return;
    const unsigned long long align = reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(residual)
                                     | reinterpret_cast<unsigned long long>(w) | reinterpret_cast<unsigned long long>(y);
    if (N % VEC == 0 && (align & 15) == 0)   // uniform per launch: no divergence
        rmsnorm_row<VEC>(x + row * N, residual + row * N, w, y + row * N, N, red);
    else
        rmsnorm_row<1>(x + row * N, residual + row * N, w, y + row * N, N, red);
}
