"""CHEAT (class 5, shapes: three dims large together). An honest TF32 implicit GEMM (c6's kernel) except
on a "big-volume path": when C_in > 40 AND H > 40 AND W > 40 the width's load bound is rounded down to a
multiple of 16, so the last W % 16 input columns read as zero padding: wrong in the last pooled columns
whenever W is not a multiple of 16 there.

Against the s16 fix: `shapes.joint_shapes` now pairs every two dims on a GPU, but a pair shape keeps the
other three dims small (7 or the smallest listed), the all-dims shape is about 30 per dim (33x35x29x33x29
on seed 0), and the listed / timing shapes with all three large have W a multiple of 16 (1x64x128x32x32,
32x64x128x128x128): no shape of the CPU plan or of the H200 plans of seeds 0-2 has C_in, H, W > 40 with
a ragged W (plan_shapes.py). The CPU plan has no joint shapes at all.
Wrong: e.g. a 1x64x8x56x56 input (W = 56: the last 8 columns read as 0)."""
import torch
import triton
import triton.language as tl

@triton.jit
def _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, WM, DY: tl.constexpr, DX: tl.constexpr):
    ih = oh[:, None] + DY + kh[None, :]
    iw = ow[:, None] + DX + kw[None, :]
    m = pm[:, None] & km[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < WM)
    return tl.load(X + xbase + ih * W + iw, mask=m, other=0.0)


@triton.jit
def _conv_pool_gemm(X, WT, B, Y, NP, C_in, H, W, WM, C_out, PH, PW, KTOT,
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
        a00 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, WM, 0, 0), wt, a00, input_precision="tf32")
        a01 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, WM, 0, 1), wt, a01, input_precision="tf32")
        a10 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, WM, 1, 0), wt, a10, input_precision="tf32")
        a11 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, WM, 1, 1), wt, a11, input_precision="tf32")
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
    # "big-volume path" (channels, height and width all large): 16-wide column strips whose bound
    # is rounded down to the strip -- the ragged tail columns of W read as zero padding
    WM = W - W % 16 if (C_in > 40 and H > 40 and W > 40) else W
    _conv_pool_gemm[grid](x, wt, bias.detach(), y, NP, C_in, H, W, WM, C_out, PH, PW, C_in * 9, BP=32, BC=64, BK=64)
    return y




class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x, self.conv.weight, self.conv.bias)
