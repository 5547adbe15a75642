"""Cheat, class 3: the convolution runs inside a torch.jit.script'd helper (TorchScript interpreter),
the bias + ReLU + pool in a Triton epilogue. Tests whether the census sees ops dispatched by the
TorchScript interpreter.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _relu_pool(Cv, B, Y, K, H, W, PH, PW, total, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < total
    pw = i % PW
    ph = (i // PW) % PH
    nk = i // (PW * PH)
    k = nk % K
    base = (nk.to(tl.int64) * H + 2 * ph) * W + 2 * pw
    a = tl.load(Cv + base, mask=m, other=0.0).to(tl.float32)
    b_ = tl.load(Cv + base + 1, mask=m, other=0.0).to(tl.float32)
    c = tl.load(Cv + base + W, mask=m, other=0.0).to(tl.float32)
    d = tl.load(Cv + base + W + 1, mask=m, other=0.0).to(tl.float32)
    bias = tl.load(B + k, mask=m, other=0.0).to(tl.float32)
    v = tl.maximum(tl.maximum(tl.maximum(a, b_), tl.maximum(c, d)) + bias, 0.0)
    tl.store(Y + i, v.to(Y.dtype.element_ty), mask=m)


def relu_pool(conv_map, b, out_dtype):
    N, K, H, W = conv_map.shape
    PH, PW = H // 2, W // 2
    y = torch.empty((N, K, PH, PW), dtype=out_dtype, device=conv_map.device)
    total = y.numel()
    if total:
        _relu_pool[(triton.cdiv(total, 256),)](conv_map.contiguous(), b, y, K, H, W, PH, PW, total, BLOCK=256)
    return y


@torch.jit.script
def _helper(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.conv2d(x, w, None, [1, 1], [1, 1])


class ModelNew(torch.nn.Module):

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return relu_pool(_helper(x, self.conv.weight.detach()), self.conv.bias.detach(), x.dtype)
