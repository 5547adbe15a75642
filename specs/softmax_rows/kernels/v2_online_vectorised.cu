// softmax_rows v2: native CUDA, one block per row, online max/sum, 16-byte loads, row cached in registers.
//
// Each thread walks its share of the row in 16-byte vectors (8 bfloat16 or 4 float32 elements:
// one LDG.128 each, a warp reads 512 contiguous bytes per instruction) and keeps a running max m
// and a running sum s of exp(x - m), rescaling s when m grows (the online softmax recurrence), so
// one read of the row gives both statistics. The first CACHE vectors of every thread stay in
// registers as float32: rows up to CACHE * VEC * BLOCK elements (8192 bfloat16 at CACHE 4,
// BLOCK 256) are read from DRAM once and written once, 2 * M * N * itemsize bytes; the part of a
// longer row beyond the cache is read again for the output (from L2 while the row is fresh).
// The (m, s) pairs are combined with warp shuffles (__shfl_xor_sync, no shared memory), then
// across the block's warps through BLOCK / 32 shared slots. All arithmetic in float32 (expf for
// float32 data, the faster __expf for 2-byte types); one rounding to the element type at the store.
//
// Rows whose length is not a multiple of VEC (or unaligned pointers) take the same code with
// one element per access instead of one vector. Compiled by NVRTC; KS_T is the element type,
// BLOCK (threads per block, a multiple of 32) and CACHE (cached 16-byte vectors per thread) are
// tunables.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef CACHE
#define CACHE 4
#endif

constexpr int VEC = 16 / sizeof(KS_T);          // elements per 16-byte vector
constexpr int WARPS = BLOCK / 32;
#define NEG_INF __int_as_float(0xff800000)

// float32: expf (about 1 ulp, like PyTorch's softmax; __expf's error grows with |x| and a float32
// softmax built on it is measurably less precise -- the precision rule, VERIFICATION.md rule 23,
// compares the two). 2-byte types: __expf (ex2.approx), whose error is far below their rounding at
// the store, and cheaper.
__device__ __forceinline__ float ks_exp(float v) {
    if constexpr (sizeof(KS_T) == 4) return expf(v);
    else return __expf(v);
}

__device__ __forceinline__ float ks_f(float v) { return v; }
__device__ __forceinline__ float ks_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float ks_f(__half v) { return __half2float(v); }
__device__ __forceinline__ void ks_set(float& d, float v) { d = v; }
__device__ __forceinline__ void ks_set(__nv_bfloat16& d, float v) { d = __float2bfloat16(v); }
__device__ __forceinline__ void ks_set(__half& d, float v) { d = __float2half(v); }

// W elements starting at p, as float32 (W == VEC: one 16-byte load; W == 1: one element).
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

// (m, s) <- the statistics of the union of (m, s) and (m2, s2); an empty side has m = -inf, s = 0.
__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    float mn = fmaxf(m, m2);
    if (mn == NEG_INF) return;
    s = s * ks_exp(m - mn) + s2 * ks_exp(m2 - mn);
    m = mn;
}

template <int W>
__device__ __forceinline__ void online(const float* v, float& m, float& s) {
    float vm = v[0];
#pragma unroll
    for (int i = 1; i < W; ++i) vm = fmaxf(vm, v[i]);
    float mn = fmaxf(m, vm);
    if (mn == NEG_INF) return;  // every value so far -inf (a masked run): s stays 0, no -inf - -inf = NaN
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < W; ++i) acc += ks_exp(v[i] - mn);
    s = (m == NEG_INF ? 0.f : s * ks_exp(m - mn)) + acc;
    m = mn;
}

template <int W>
__device__ __forceinline__ void softmax_row(const KS_T* __restrict__ xr, KS_T* __restrict__ yr, int N,
                                            float* red_m, float* red_s) {
    constexpr int UNITS = CACHE * VEC / W;      // cached accesses per thread (same registers for both W)
    const int n_units = N / W;                  // W divides N on this path
    const int tid = threadIdx.x;
    float cache[UNITS][W];
    float m = NEG_INF, s = 0.f;
#pragma unroll
    for (int c = 0; c < UNITS; ++c) {
        int u = c * BLOCK + tid;
        if (u < n_units) {
            load_unit<W>(xr + (long long)u * W, cache[c]);
            online<W>(cache[c], m, s);
        }
    }
    for (int u = UNITS * BLOCK + tid; u < n_units; u += BLOCK) {
        float v[W];
        load_unit<W>(xr + (long long)u * W, v);
        online<W>(v, m, s);
    }
    // block-wide combine: shuffles inside each warp, then one slot per warp in shared memory
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, off);
        float s2 = __shfl_xor_sync(0xffffffffu, s, off);
        combine(m, s, m2, s2);
    }
    const int warp = tid / 32, lane = tid % 32;
    if (lane == 0) { red_m[warp] = m; red_s[warp] = s; }
    __syncthreads();
    if (warp == 0) {
        m = lane < WARPS ? red_m[lane] : NEG_INF;
        s = lane < WARPS ? red_s[lane] : 0.f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffffu, m, off);
            float s2 = __shfl_xor_sync(0xffffffffu, s, off);
            combine(m, s, m2, s2);
        }
        if (lane == 0) { red_m[0] = m; red_s[0] = s; }
    }
    __syncthreads();
    m = red_m[0];
    const float inv = 1.f / red_s[0];
#pragma unroll
    for (int c = 0; c < UNITS; ++c) {
        int u = c * BLOCK + tid;
        if (u < n_units) {
            float o[W];
#pragma unroll
            for (int i = 0; i < W; ++i) o[i] = ks_exp(cache[c][i] - m) * inv;
            store_unit<W>(yr + (long long)u * W, o);
        }
    }
    for (int u = UNITS * BLOCK + tid; u < n_units; u += BLOCK) {
        float v[W];
        load_unit<W>(xr + (long long)u * W, v);
#pragma unroll
        for (int i = 0; i < W; ++i) v[i] = ks_exp(v[i] - m) * inv;
        store_unit<W>(yr + (long long)u * W, v);
    }
}

// x, y: (M, N) contiguous. grid: (M); block: (BLOCK).
extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_rows_online(const KS_T* __restrict__ x, KS_T* __restrict__ y, int M, int N) {
    __shared__ float red_m[WARPS], red_s[WARPS];
    const long long row = blockIdx.x;
    if (row >= M) return;
    const KS_T* xr = x + row * N;
    KS_T* yr = y + row * N;
    const bool vec = (N % VEC == 0) && ((reinterpret_cast<unsigned long long>(x) & 15) == 0)
                     && ((reinterpret_cast<unsigned long long>(y) & 15) == 0);
    if (vec) softmax_row<VEC>(xr, yr, N, red_m, red_s);   // uniform per launch: no divergence
    else softmax_row<1>(xr, yr, N, red_m, red_s);
}
