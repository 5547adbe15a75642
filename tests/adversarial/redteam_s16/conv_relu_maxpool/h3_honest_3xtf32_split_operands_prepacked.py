"""HONEST (conv_relu_maxpool, float32). "3xTF32" split-precision implicit GEMM: every operand is split
in-kernel into a TF32 head (low 13 mantissa bits cleared) and a float32 remainder, and each product is
ah*wh + ah*wl + al*wh in three TF32 tl.dots (small terms first), float32 accumulation -- about float32
accuracy from TF32 tensor cores (NVIDIA CUTLASS's 3xTF32; cf. Ootomo & Yokota 2022). The weight is
pre-packed once at __init__ as a (C_in * 9, C_out) K-major buffer (non-persistent module buffer); the
im2col gather of the four pooling-window positions is done in the kernel, over flattened (n, ph, pw)
rows. Bias, ReLU, max in the epilogue, one store. Must be accepted (far more precise than the policy)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, DY: tl.constexpr, DX: tl.constexpr):
    ih = oh[:, None] + DY + kh[None, :]
    iw = ow[:, None] + DX + kw[None, :]
    m = pm[:, None] & km[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    return tl.load(X + xbase + ih * W + iw, mask=m, other=0.0)


@triton.jit
def _split_tf32(v):
    # v = hi + lo, hi with the low 13 mantissa bits cleared (exactly representable in TF32)
    hi = (v.to(tl.int32, bitcast=True) & -8192).to(tl.float32, bitcast=True)
    return hi, v - hi


@triton.jit
def _dot3(a, wh, wl, acc):
    # 3xTF32: a*w ~= ah*wh + ah*wl + al*wh (the al*wl term is below float32's rounding)
    ah, al = _split_tf32(a)
    acc = tl.dot(al, wh, acc, input_precision="tf32")
    acc = tl.dot(ah, wl, acc, input_precision="tf32")
    return tl.dot(ah, wh, acc, input_precision="tf32")


@triton.jit
def _conv_pool_gemm(X, WT, B, Y, NP, C_in, H, W, C_out, PH, PW, KTOT,
                    BP: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr):
    # rows of the GEMM: pooled pixels of every image, flattened (n, ph, pw); columns: output channels
    q = tl.program_id(0) * BP + tl.arange(0, BP)
    co = tl.program_id(1) * BC + tl.arange(0, BC)
    pm = q < NP
    cm = co < C_out
    n = q // (PH * PW)
    p = q % (PH * PW)
    oh = (p // PW) * 2
    ow = (p % PW) * 2
    a00 = tl.zeros([BP, BC], dtype=tl.float32)
    a01 = tl.zeros([BP, BC], dtype=tl.float32)
    a10 = tl.zeros([BP, BC], dtype=tl.float32)
    a11 = tl.zeros([BP, BC], dtype=tl.float32)
    for k0 in range(0, KTOT, BK):
        k = k0 + tl.arange(0, BK)
        km = k < KTOT
        ci = k // 9
        r = k % 9
        kh = r // 3 - 1
        kw = r % 3 - 1
        xbase = (n[:, None] * C_in + ci[None, :]).to(tl.int64) * H * W
        wt = tl.load(WT + k[:, None] * C_out + co[None, :], mask=km[:, None] & cm[None, :], other=0.0)
        wh, wl = _split_tf32(wt)
        a00 = _dot3(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 0), wh, wl, a00)
        a01 = _dot3(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 1), wh, wl, a01)
        a10 = _dot3(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 0), wh, wl, a10)
        a11 = _dot3(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 1), wh, wl, a11)
    bv = tl.load(B + co, mask=cm, other=0.0)
    m = tl.maximum(tl.maximum(a00, a01), tl.maximum(a10, a11)) + bv[None, :]
    m = tl.maximum(m, 0.0)
    y_off = (n[:, None] * C_out + co[None, :]).to(tl.int64) * (PH * PW) + p[:, None]
    tl.store(Y + y_off, m, mask=pm[:, None] & cm[None, :])


def conv_relu_maxpool(x, wt, bias):
    x = x.contiguous()
    N, C_in, H, W = x.shape
    C_out = wt.shape[1]
    PH, PW = H // 2, W // 2
    y = torch.empty((N, C_out, PH, PW), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    NP = N * PH * PW
    grid = (triton.cdiv(NP, 32), triton.cdiv(C_out, 64))
    _conv_pool_gemm[grid](x, wt, bias.detach(), y, NP, C_in, H, W, C_out, PH, PW, C_in * 9, BP=32, BC=64, BK=64)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self.register_buffer("w_packed", self.conv.weight.detach().reshape(out_channels, in_channels * 9).t()
                             .contiguous(), persistent=False)

    def forward(self, x):
        return conv_relu_maxpool(x, self.w_packed, self.conv.bias)
