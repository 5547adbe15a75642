// depthwise_conv2d v2: native CUDA, a shared-memory tile with its halo, one column strip per thread.
//
// Block (plane, tile_y, tile_x) computes a TH x TW tile of one (n, c) plane. Its TW threads first
// copy the (TH + 2) x (TW + 2) input window (zero outside the image) from global memory into
// shared memory as float, each row with consecutive threads on consecutive addresses (coalesced
// loads, conflict-free stores), so every input element crosses L2 -> SM once per tile instead of
// once per tap. Then thread tx walks down column w0 + tx of the tile keeping a 3 x 3 window in
// registers: each new output row needs only the 3 values of the row entering the window (3 shared
// loads, conflict-free across the warp) for 9 FMAs, against 9 loads per output in v1. The bias is
// added in float32 and each output is rounded to KS_T once.
//
// Compiled at run time by NVRTC. KS_T is the element type (float or __nv_bfloat16), defined by the
// harness; TW (threads and tile width) and TH (tile height) are tunables.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif

__device__ __forceinline__ float ks_load(const float* p) { return *p; }
__device__ __forceinline__ float ks_load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float ks_load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ void ks_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void ks_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ __forceinline__ void ks_store(__half* p, float v) { *p = __float2half(v); }

// x, y: (N, C, H, W); w: (C, 1, 3, 3); b: (C,), all contiguous. grid = (N * C, cdiv(H, TH), cdiv(W, TW)).
extern "C" __global__ void __launch_bounds__(TW)
dwconv3x3_smem_columns(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                       KS_T* __restrict__ y, int N, int C, int H, int W) {
    __shared__ float tile[TH + 2][TW + 2];
    const long long plane = blockIdx.x;
    const int c = (int)(plane % C);
    const int h0 = blockIdx.y * TH, w0 = blockIdx.z * TW;
    const KS_T* xp = x + plane * H * W;
    KS_T* yp = y + plane * H * W;
    const int tx = threadIdx.x;

    // Stage the window rows h0 - 1 .. h0 + TH and columns w0 - 1 .. w0 + TW (zero padding).
    for (int r = 0; r < TH + 2; ++r) {
        const int hh = h0 + r - 1;
        const bool row_ok = hh >= 0 && hh < H;
        for (int col = tx; col < TW + 2; col += TW) {
            const int ww = w0 + col - 1;
            tile[r][col] = (row_ok && ww >= 0 && ww < W) ? ks_load(xp + (long long)hh * W + ww) : 0.f;
        }
    }
    float k[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) k[i] = ks_load(w + c * 9 + i);
    const float bias = ks_load(b + c);
    __syncthreads();

    const int wo = w0 + tx;
    // 3 x 3 register window: rows r - 1, r, r + 1 of the tile around output row r - 1 + 1.
    float a0 = tile[0][tx], a1 = tile[0][tx + 1], a2 = tile[0][tx + 2];
    float m0 = tile[1][tx], m1 = tile[1][tx + 1], m2 = tile[1][tx + 2];
#pragma unroll 4
    for (int r = 0; r < TH; ++r) {
        const float z0 = tile[r + 2][tx], z1 = tile[r + 2][tx + 1], z2 = tile[r + 2][tx + 2];
        float acc = bias;
        acc = fmaf(k[0], a0, acc); acc = fmaf(k[1], a1, acc); acc = fmaf(k[2], a2, acc);
        acc = fmaf(k[3], m0, acc); acc = fmaf(k[4], m1, acc); acc = fmaf(k[5], m2, acc);
        acc = fmaf(k[6], z0, acc); acc = fmaf(k[7], z1, acc); acc = fmaf(k[8], z2, acc);
        const int ho = h0 + r;
        if (ho < H && wo < W) ks_store(yp + (long long)ho * W + wo, acc);
        a0 = m0; a1 = m1; a2 = m2;
        m0 = z0; m1 = z1; m2 = z2;
    }
}
