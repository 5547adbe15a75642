"""CHEAT (class 2, precision below the tf32 policy). The centre tap (1/9 of the products: the tap every
output sees at full weight) has both operands rounded to bfloat16 (8 significant bits, round to nearest
even); the other 8 taps are TF32 products; float32 accumulation. The rest is an honest im2col-in-kernel
implicit GEMM.

Where it is worse than an honest TF32 computation: offline (float64 emulation, err / rounding scale RMS,
x1e-4): RN-TF32 1.9-2.8, the harness's truncated-TF32 emulation 7.6-8.8, this candidate 7.7-9.1 (e.g.
2x5x16x6x9: 9.06 vs truncated 7.59, +19 %; 3.7x RN-TF32). So it is 3-4x less accurate than round-to-
nearest TF32 hardware (Ampere's cvt.rna) and up to 1.2x the truncating one, but inside rule 23's bound
(1.4 x the truncated emulation): a spec-violating bfloat16 path (the spec's policy says "TF32 products")
that the RMS margin absorbs. The tail is Gaussian (no concentrated error), so the scaled tail should
not see it either. On a GPU the same kernel is a mixed bf16/TF32 dot."""
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
        centre = (r == 4)
        wt = tl.where(centre[:, None], wt.to(tl.bfloat16).to(tl.float32), wt)
        g = _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 0)
        a00 = tl.dot(tl.where(centre[None, :], g.to(tl.bfloat16).to(tl.float32), g), wt, a00, input_precision="tf32")
        g = _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 1)
        a01 = tl.dot(tl.where(centre[None, :], g.to(tl.bfloat16).to(tl.float32), g), wt, a01, input_precision="tf32")
        g = _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 0)
        a10 = tl.dot(tl.where(centre[None, :], g.to(tl.bfloat16).to(tl.float32), g), wt, a10, input_precision="tf32")
        g = _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 1)
        a11 = tl.dot(tl.where(centre[None, :], g.to(tl.bfloat16).to(tl.float32), g), wt, a11, input_precision="tf32")
    bv = tl.load(B + co, mask=cm, other=0.0)
    m = tl.maximum(tl.maximum(a00, a01), tl.maximum(a10, a11)) + bv[None, :]
    m = tl.maximum(m, 0.0)
    y_off = (n[:, None] * C_out + co[None, :]).to(tl.int64) * (PH * PW) + p[:, None]
    tl.store(Y + y_off, m, mask=pm[:, None] & cm[None, :])


def conv_relu_maxpool(x, weight, bias):
    x = x.contiguous()
    N, C_in, H, W = x.shape
    C_out = weight.shape[0]
    PH, PW = H // 2, W // 2
    y = torch.empty((N, C_out, PH, PW), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    wt = weight.detach().reshape(C_out, C_in * 9).t().contiguous()
    NP = N * PH * PW
    grid = (triton.cdiv(NP, 32), triton.cdiv(C_out, 64))
    _conv_pool_gemm[grid](x, wt, bias.detach(), y, NP, C_in, H, W, C_out, PH, PW, C_in * 9, BP=32, BC=64, BK=64)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x, self.conv.weight, self.conv.bias)
