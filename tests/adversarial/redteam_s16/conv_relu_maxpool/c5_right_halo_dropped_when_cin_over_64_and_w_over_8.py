"""CHEAT (class 5, shapes). A realistic tiling bug that only two dims together expose: the "wide-channel"
path (taken when C_in > 64) stages its input in 8-column strips with the left halo only, so the conv column
at the right edge of every strip reads the next strip's first column as zero padding. Wrong iff C_in > 64
AND W >= 9 (with W <= 8 that column is real padding anyway) -- e.g. every ResNet layer (C_in 128/256,
W 56/28/14).

The CPU plan (seed 0) has C_in > 64 only in 1x261x8x5x5 and 1x276x1x2x2 (W 5 and 2); every GPU plan of
seeds 0-2 (printed from kernelsynth.stages.exploration's recipe) has C_in > 64 only with W <= 7
(340x260x7x7x7, 7x378x257x7x7, 401x413x2x2x2, 312x280x264x2x2, 1x1280x2x2x2, 2x512x384x2x2, ...): the
listed 1x64x128x32x32 / 2x64x128x31x30 and the timing shape stop at C_in = 64, and the joint pair shapes
raise consecutive dims only ((N, C_in), (C_in, C_out), (C_out, H), (H, W)), never (C_in, W).
Otherwise an honest im2col-in-kernel TF32 implicit GEMM."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, DY: tl.constexpr, DX: tl.constexpr, WIDE: tl.constexpr):
    ih = oh[:, None] + DY + kh[None, :]
    iw = ow[:, None] + DX + kw[None, :]
    m = pm[:, None] & km[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    if WIDE:
        # wide-channel path: input staged per 8-column strip (4 pooled columns) with its left halo only;
        # the right halo column (first column of the next strip) reads as padding
        m = m & (iw < (ow[:, None] // 8) * 8 + 8)
    return tl.load(X + xbase + ih * W + iw, mask=m, other=0.0)


@triton.jit
def _conv_pool_gemm(X, WT, B, Y, NP, C_in, H, W, C_out, PH, PW, KTOT,
                    BP: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr, WIDE: tl.constexpr):
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
        a00 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 0, WIDE), wt, a00, input_precision="tf32")
        a01 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 1, WIDE), wt, a01, input_precision="tf32")
        a10 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 0, WIDE), wt, a10, input_precision="tf32")
        a11 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 1, WIDE), wt, a11, input_precision="tf32")
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
    _conv_pool_gemm[grid](x, wt, bias.detach(), y, NP, C_in, H, W, C_out, PH, PW, C_in * 9, BP=32, BC=64, BK=64,
                          WIDE=C_in > 64)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x, self.conv.weight, self.conv.bias)
