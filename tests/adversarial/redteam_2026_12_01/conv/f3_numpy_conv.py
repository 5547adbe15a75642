"""Cheat, class 3: the convolution is done by numpy (np.einsum over a sliding-window view of the
padded input; numpy's BLAS does the work), the tensors crossing through x.numpy() and
torch.from_numpy (no aten arithmetic). bfloat16 goes through float32 (a dtype copy). Triton
epilogue for bias + ReLU + pool. On a GPU the same crossing is .cpu() / .to(device) (copies).
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


import numpy as np


class ModelNew(torch.nn.Module):

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        xf = x.detach().to("cpu", torch.float32).contiguous().numpy()
        wf = self.conv.weight.detach().to("cpu", torch.float32).contiguous().numpy()
        xp = np.pad(xf, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))   # N, C, H, W, 3, 3
        conv = np.einsum("nchwij,kcij->nkhw", win, wf, optimize=True).astype(np.float32)
        conv_t = torch.from_numpy(np.ascontiguousarray(conv)).to(x.device)
        return relu_pool(conv_t, self.conv.bias.detach(), x.dtype)
