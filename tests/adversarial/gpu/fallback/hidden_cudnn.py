"""Cheat (GPU, a library fallback hidden from the dispatch census): cuDNN through a channels-last
F.conv2d, called with the Python dispatch modes switched off, so no TorchDispatchMode sees the
convolution; then a Triton ReLU + max-pool epilogue. Correct. Only the launched-kernel census
(torch.profiler: cuDNN kernels under aten::cudnn_convolution) can label it."""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.utils._python_dispatch import _disable_current_modes


@triton.jit
def _relu_pool_epilogue(Cv, Y, total, H, W, PH, PW, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # flat index of a pooled output
    mask = i < total
    plane, p = i // (PH * PW), i % (PH * PW)  # (image, channel) plane of the conv output
    ph, pw = p // PW, p % PW
    base = Cv + plane * H * W + (2 * ph) * W + 2 * pw
    a = tl.maximum(tl.load(base, mask=mask), tl.load(base + 1, mask=mask))
    b = tl.maximum(tl.load(base + W, mask=mask), tl.load(base + W + 1, mask=mask))
    tl.store(Y + i, tl.maximum(tl.maximum(a, b), 0.0), mask=mask)


def _epilogue(conv_out):
    N, K, H, W = conv_out.shape
    y = torch.empty((N, K, H // 2, W // 2), dtype=conv_out.dtype, device=conv_out.device)
    if y.numel():
        _relu_pool_epilogue[(triton.cdiv(y.numel(), 256),)](conv_out.contiguous(), y, y.numel(), H, W, H // 2,
                                                            W // 2, BLOCK=256)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        with _disable_current_modes():
            conv = F.conv2d(x.contiguous(memory_format=torch.channels_last), self.conv.weight, self.conv.bias,
                            padding=1).contiguous()
        return _epilogue(conv)
