"""A KernelBench-style external candidate for conv_relu_maxpool: CUDA C++ with host code, built
by torch.utils.cpp_extension.load_inline (the second way into the CUDA backend).

Run it through the harness with
``python -m kernelsynth task=conv_relu_maxpool exploration.extra_candidates=[examples/load_inline_conv_relu_maxpool.py]``.
The extension is built once per source into ``$TORCH_EXTENSIONS_DIR`` (the worker points it at
``<cache_dir>/torch_extensions``), so a second run loads it without compiling. The kernel is the
naive fused one (one thread per pooled output), templated over float / bfloat16 / half.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

template <typename T>
__global__ void conv_relu_maxpool_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                         T* __restrict__ y, int N, int C, int H, int W, int K, int PH, int PW) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)N * K * PH * PW) return;
    int pw = idx % PW, ph = (idx / PW) % PH, k = (idx / ((long long)PW * PH)) % K;
    int n = idx / ((long long)PW * PH * K);
    float best = -3.402823466e38f;
    for (int q = 0; q < 4; ++q) {
        int oh = 2 * ph + (q >> 1), ow = 2 * pw + (q & 1);
        float acc = 0.f;
        for (int c = 0; c < C; ++c)
            for (int kh = 0; kh < 3; ++kh) {
                int ih = oh + kh - 1;
                if (ih < 0 || ih >= H) continue;
                for (int kw = 0; kw < 3; ++kw) {
                    int iw = ow + kw - 1;
                    if (iw < 0 || iw >= W) continue;
                    acc += static_cast<float>(x[(((long long)n * C + c) * H + ih) * W + iw]) *
                           static_cast<float>(w[((k * C + c) * 3 + kh) * 3 + kw]);
                }
            }
        best = fmaxf(best, acc);
    }
    y[idx] = static_cast<T>(fmaxf(best + static_cast<float>(b[k]), 0.f));
}

torch::Tensor conv_relu_maxpool(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    x = x.contiguous(); w = w.contiguous(); b = b.contiguous();
    int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), K = w.size(0);
    int PH = H / 2, PW = W / 2;
    auto y = torch::empty({N, K, PH, PW}, x.options());
    long long total = (long long)N * K * PH * PW;
    if (total == 0) return y;
    int threads = 256;
    unsigned blocks = (unsigned)((total + threads - 1) / threads);
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "conv_relu_maxpool", [&] {
        conv_relu_maxpool_kernel<scalar_t><<<blocks, threads, 0, stream>>>(
            x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
            N, C, H, W, K, PH, PW);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

CPP_SRC = "torch::Tensor conv_relu_maxpool(torch::Tensor x, torch::Tensor w, torch::Tensor b);"

_ext = load_inline(name="ks_example_conv_relu_maxpool", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC,
                   functions=["conv_relu_maxpool"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return _ext.conv_relu_maxpool(x, self.conv.weight, self.conv.bias)
