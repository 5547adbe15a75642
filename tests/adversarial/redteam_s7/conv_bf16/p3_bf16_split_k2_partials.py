"""CHEAT, class 2 (extra roundings), bfloat16 task (policy bf16: one rounding at the store). Split-K
over the input channels in two halves, each half's float32 partial rounded to bfloat16 (as a split-K
kernel that writes its partials in the output dtype to halve the partial traffic), then summed and
rounded again at the store: three roundings where the policy allows one. Targets rule 23 (margin 1.4x
of the honest RMS). Run in bfloat16 (in float32 it is bfloat16 arithmetic and fails allclose)."""
import hashlib
import numpy as np
import torch
import triton
import triton.language as tl



@triton.jit
def conv_pool_kernel(x, w, b, y, C_in, H, W, C_out, PH, PW, BUG: tl.constexpr,
                     BP: tl.constexpr, BC: tl.constexpr, BCI: tl.constexpr):
    n = tl.program_id(0)
    p = tl.program_id(1) * BP + tl.arange(0, BP)
    co = tl.program_id(2) * BC + tl.arange(0, BC)
    pm = p < PH * PW
    cm = co < C_out
    oh = (p // PW) * 2
    ow = (p % PW) * 2
    a00 = tl.zeros([BP, BC], dtype=tl.float32)
    a01 = tl.zeros([BP, BC], dtype=tl.float32)
    a10 = tl.zeros([BP, BC], dtype=tl.float32)
    a11 = tl.zeros([BP, BC], dtype=tl.float32)
    h0 = tl.zeros([BP, BC], dtype=tl.float32)
    h1 = tl.zeros([BP, BC], dtype=tl.float32)
    h2 = tl.zeros([BP, BC], dtype=tl.float32)
    h3 = tl.zeros([BP, BC], dtype=tl.float32)
    for c0 in range(0, C_in, BCI):
        ci = c0 + tl.arange(0, BCI)
        cim = ci < C_in
        base = x + (n * C_in + ci[None, :]).to(tl.int64) * H * W
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                wv = tl.load(w + co[None, :] * (C_in * 9) + ci[:, None] * 9 + kh * 3 + kw,
                             mask=cim[:, None] & cm[None, :], other=0.0).to(tl.float32)
                ih = oh + (kh - 1)
                iw = ow + (kw - 1)
                r0 = (ih >= 0) & (ih < H)
                r1 = (ih + 1 >= 0) & (ih + 1 < H)
                c0m = (iw >= 0) & (iw < W)
                c1m = (iw + 1 >= 0) & (iw + 1 < W)
                x00 = tl.load(base + (ih * W + iw)[:, None], mask=(pm & r0 & c0m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                x01 = tl.load(base + (ih * W + iw + 1)[:, None], mask=(pm & r0 & c1m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                x10 = tl.load(base + ((ih + 1) * W + iw)[:, None], mask=(pm & r1 & c0m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                x11 = tl.load(base + ((ih + 1) * W + iw + 1)[:, None], mask=(pm & r1 & c1m)[:, None] & cim[None, :], other=0.0).to(tl.float32)
                pass
                if BUG == 7:
                    hi = (ci >= C_in // 2)[None, :]
                    h0 += tl.sum(tl.where(hi, x00, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    h1 += tl.sum(tl.where(hi, x01, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    h2 += tl.sum(tl.where(hi, x10, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    h3 += tl.sum(tl.where(hi, x11, 0.0)[:, :, None] * wv[None, :, :], axis=1)
                    x00 = tl.where(hi, 0.0, x00)
                    x01 = tl.where(hi, 0.0, x01)
                    x10 = tl.where(hi, 0.0, x10)
                    x11 = tl.where(hi, 0.0, x11)
                a00 += tl.sum(x00[:, :, None] * wv[None, :, :], axis=1)
                a01 += tl.sum(x01[:, :, None] * wv[None, :, :], axis=1)
                a10 += tl.sum(x10[:, :, None] * wv[None, :, :], axis=1)
                a11 += tl.sum(x11[:, :, None] * wv[None, :, :], axis=1)
    if BUG == 7:
        # split-K over the input channels, each half's partial stored as bfloat16
        a00 = a00.to(tl.bfloat16).to(tl.float32) + h0.to(tl.bfloat16).to(tl.float32)
        a01 = a01.to(tl.bfloat16).to(tl.float32) + h1.to(tl.bfloat16).to(tl.float32)
        a10 = a10.to(tl.bfloat16).to(tl.float32) + h2.to(tl.bfloat16).to(tl.float32)
        a11 = a11.to(tl.bfloat16).to(tl.float32) + h3.to(tl.bfloat16).to(tl.float32)
    bm = cm
    if BUG == 4:
        # "paired channel epilogue": when C_out % 4 == 2 the last channel's bias is lost
        bm = cm & (co < C_out - 1)
    bv = tl.load(b + co, mask=bm, other=0.0).to(tl.float32)
    m = tl.maximum(tl.maximum(a00, a01), tl.maximum(a10, a11)) + bv[None, :]
    m = tl.maximum(m, 0.0)
    pass
    tl.store(y + (n * C_out + co[None, :]).to(tl.int64) * (PH * PW) + p[:, None], m.to(y.dtype.element_ty),
             mask=pm[:, None] & cm[None, :])


def conv_relu_maxpool(x, weight, bias, bug=0):
    N, C_in, H, W = x.shape
    C_out = weight.shape[0]
    PH, PW = H // 2, W // 2
    y = torch.empty((N, C_out, PH, PW), device=x.device, dtype=x.dtype)
    BP, BC, BCI = 16, 32, 16
    grid = (N, triton.cdiv(PH * PW, BP), triton.cdiv(C_out, BC))
    conv_pool_kernel[grid](x, weight, bias, y, C_in, H, W, C_out, PH, PW, BUG=bug, BP=BP, BC=BC, BCI=BCI)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x.contiguous(), self.conv.weight.detach().contiguous(),
                                 self.conv.bias.detach().contiguous(), 7)
