// conv_relu_maxpool v2: tiled fused kernel, input tile + halo and weights staged in shared memory.
//
// A block owns an 8x8 tile of pooled outputs (a 16x16 conv tile, an 18x18 input tile with its
// halo) for one image and KB = 4 * KPT output channels. It walks the input channels in chunks of
// CC: the chunk's 18x18 input tiles (zero outside the image: the padding) and the KB x CC x 3x3
// weights are copied to shared memory once, then each of the 256 threads (64 pooled pixels x 4
// channel groups) reads the 4x4 input patch under its 2x2 window into registers and accumulates
// 4 window positions x KPT channels with fully unrolled 3x3 loops: 36 * KPT FMAs per 16 shared
// loads, against v1's two global loads per FMA. Each input element now leaves DRAM/L2 once per
// block instead of once per output that uses it. ReLU and the 2x2 max happen in registers before
// one store per pooled output. Arithmetic stays on the float32 FMA pipes (no tensor cores).
//
// Compiled at run time by NVRTC. KS_T is the element type (float, __nv_bfloat16 or __half);
// KPT (output channels per thread) and CC (input channels per shared-memory chunk) are tunables.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef KS_T
#define KS_T float
#endif
#ifndef KPT
#define KPT 8
#endif
#ifndef CC
#define CC 16
#endif
#define TP 8                  // pooled tile side
#define TI (2 * TP + 2)       // input tile side (conv tile + halo)
#define KB (4 * KPT)          // output channels per block
#define THREADS 256

__device__ __forceinline__ float ks_load(const float* p) { return *p; }
__device__ __forceinline__ float ks_load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ __forceinline__ float ks_load(const __half* p) { return __half2float(*p); }
__device__ __forceinline__ void ks_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void ks_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ __forceinline__ void ks_store(__half* p, float v) { *p = __float2half(v); }

// x: (N, C, H, W); w: (K, C, 3, 3); b: (K,); y: (N, K, PH, PW), all contiguous.
// grid: (cdiv(PW, 8) * cdiv(PH, 8) * cdiv(K, 4 * KPT) * N, 1, 1): pooled tile fastest, then the
// block's output-channel group, then the image; block: 256 threads.
// The launch is one-dimensional: CUDA caps gridDim.y and gridDim.z at 65535 (CUDA C++ Programming
// Guide, "Technical Specifications per Compute Capability"), which a batch or a pooled height
// past 65535 exceeds; gridDim.x goes to 2^31 - 1. Blocks are numbered in the order the
// three-dimensional grid had (column tile fastest), so they are scheduled as before.
extern "C" __global__ void __launch_bounds__(THREADS)
conv_relu_maxpool_tiled(const KS_T* __restrict__ x, const KS_T* __restrict__ w, const KS_T* __restrict__ b,
                        KS_T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    __shared__ float xs[CC][TI][TI + 1];
    __shared__ float ws[KB][CC][9];
    const int tid = threadIdx.x;
    const int tiles_w = (PW + TP - 1) / TP, tiles = tiles_w * ((PH + TP - 1) / TP), kgroups = (K + KB - 1) / KB;
    const long long bid = blockIdx.x;
    const int tile = (int)(bid % tiles), kg = (int)((bid / tiles) % kgroups), n = (int)(bid / ((long long)tiles * kgroups));
    const int ph0 = (tile / tiles_w) * TP, pw0 = (tile % tiles_w) * TP;
    const int k0 = kg * KB;
    const int pix = tid % (TP * TP), grp = tid / (TP * TP);
    const int py = pix / TP, px = pix % TP;
    const int ih0 = 2 * ph0 - 1, iw0 = 2 * pw0 - 1;     // input tile origin (padding 1)
    const KS_T* xn = x + (long long)n * C * H * W;

    float acc[KPT][4];
#pragma unroll
    for (int j = 0; j < KPT; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[j][q] = 0.f;

    for (int c0 = 0; c0 < C; c0 += CC) {
        for (int e = tid; e < CC * TI * TI; e += THREADS) {
            int c = e / (TI * TI), r = (e / TI) % TI, s = e % TI;
            int ih = ih0 + r, iw = iw0 + s;
            bool in = (c0 + c < C) && ih >= 0 && ih < H && iw >= 0 && iw < W;
            xs[c][r][s] = in ? ks_load(xn + ((long long)(c0 + c) * H + ih) * W + iw) : 0.f;
        }
        for (int e = tid; e < KB * CC * 9; e += THREADS) {
            int kk = e / (CC * 9), c = (e / 9) % CC, t = e % 9;
            bool in = (k0 + kk < K) && (c0 + c < C);
            ws[kk][c][t] = in ? ks_load(w + ((long long)(k0 + kk) * C + c0 + c) * 9 + t) : 0.f;
        }
        __syncthreads();
#pragma unroll 2
        for (int c = 0; c < CC; ++c) {
            float patch[4][4];
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int s = 0; s < 4; ++s) patch[r][s] = xs[c][2 * py + r][2 * px + s];
#pragma unroll
            for (int j = 0; j < KPT; ++j) {
                const float* wj = ws[grp * KPT + j][c];
#pragma unroll
                for (int t = 0; t < 9; ++t) {
                    float wv = wj[t];
                    int kh = t / 3, kw = t % 3;
                    acc[j][0] = fmaf(patch[kh][kw], wv, acc[j][0]);
                    acc[j][1] = fmaf(patch[kh][kw + 1], wv, acc[j][1]);
                    acc[j][2] = fmaf(patch[kh + 1][kw], wv, acc[j][2]);
                    acc[j][3] = fmaf(patch[kh + 1][kw + 1], wv, acc[j][3]);
                }
            }
        }
        __syncthreads();
    }
    const int ph = ph0 + py, pw = pw0 + px;
    if (ph >= PH || pw >= PW) return;
#pragma unroll
    for (int j = 0; j < KPT; ++j) {
        int k = k0 + grp * KPT + j;
        if (k >= K) continue;
        float best = fmaxf(fmaxf(acc[j][0], acc[j][1]), fmaxf(acc[j][2], acc[j][3]));
        ks_store(y + (((long long)n * K + k) * PH + ph) * PW + pw, fmaxf(best + ks_load(b + k), 0.f));
    }
}
