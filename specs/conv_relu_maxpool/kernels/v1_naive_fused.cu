// conv_relu_maxpool v1: naive fused kernel, one thread per pooled output.
//
// Thread (n, k, ph, pw) computes the four convolution outputs of its 2x2 pooling window straight
// from global memory (C_in * 9 multiply-adds each, float32 accumulation), takes their max, adds
// the bias, applies ReLU and stores one value. The conv and ReLU feature maps never reach DRAM,
// but every input element is re-read by each of the C_out * 4 outputs that use it, through the
// caches, and every weight by every thread: the kernel is bound by load instructions, not FLOPs.
//
// Compiled at run time by NVRTC. KS_T is the element type (float, __nv_bfloat16 or __half),
// defined by the harness; BLOCK is the threads per block (a tunable).
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

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
extern "C" __global__ void __launch_bounds__(BLOCK)
conv_relu_maxpool_naive(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                        KS_T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    long long idx = (long long)blockIdx.x * BLOCK + threadIdx.x;
    long long total = (long long)N * K * PH * PW;
    if (idx >= total) return;
    int pw = (int)(idx % PW);
    int ph = (int)((idx / PW) % PH);
    int k = (int)((idx / ((long long)PW * PH)) % K);
    int n = (int)(idx / ((long long)PW * PH * K));
    const KS_T* xn = x + (long long)n * C * H * W;
    const KS_T* wk = w + (long long)k * C * 9;
    float best = __int_as_float(0xff800000);  // -inf (NVRTC defines no INFINITY without <cmath>)
    for (int q = 0; q < 4; ++q) {
        int oh = 2 * ph + (q >> 1), ow = 2 * pw + (q & 1);
        float acc = 0.f;
        for (int c = 0; c < C; ++c) {
            for (int kh = 0; kh < 3; ++kh) {
                int ih = oh + kh - 1;
                if (ih < 0 || ih >= H) continue;
                for (int kw = 0; kw < 3; ++kw) {
                    int iw = ow + kw - 1;
                    if (iw < 0 || iw >= W) continue;
                    acc += ks_load(xn + ((long long)c * H + ih) * W + iw) * ks_load(wk + c * 9 + kh * 3 + kw);
                }
            }
        }
        best = fmaxf(best, acc);
    }
    ks_store(y + idx, fmaxf(best + ks_load(b + k), 0.f));
}
