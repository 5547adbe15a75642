"""HONEST, depthwise_conv2d, unusual style: one program per (plane, column block) walks DOWN the plane
keeping a three-row window in registers (each input row is loaded once per program, as three shifted
vectors), float32 FMAs, one rounding at the store. Must be accepted.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _row3(X, base, hh, H, W, w):
    okr = (hh >= 0) & (hh < H)
    left = tl.load(X + base + hh * W + w - 1, mask=okr & (w >= 1) & (w - 1 < W), other=0.0).to(tl.float32)
    mid = tl.load(X + base + hh * W + w, mask=okr & (w < W), other=0.0).to(tl.float32)
    right = tl.load(X + base + hh * W + w + 1, mask=okr & (w + 1 < W), other=0.0).to(tl.float32)
    return left, mid, right


@triton.jit
def dw_h1_kernel(X, Wt, B, Y, C, H, W, BW: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    w = tl.program_id(1) * BW + tl.arange(0, BW)
    base = pid.to(tl.int64) * H * W
    k0 = tl.load(Wt + c * 9 + 0).to(tl.float32)
    k1 = tl.load(Wt + c * 9 + 1).to(tl.float32)
    k2 = tl.load(Wt + c * 9 + 2).to(tl.float32)
    k3 = tl.load(Wt + c * 9 + 3).to(tl.float32)
    k4 = tl.load(Wt + c * 9 + 4).to(tl.float32)
    k5 = tl.load(Wt + c * 9 + 5).to(tl.float32)
    k6 = tl.load(Wt + c * 9 + 6).to(tl.float32)
    k7 = tl.load(Wt + c * 9 + 7).to(tl.float32)
    k8 = tl.load(Wt + c * 9 + 8).to(tl.float32)
    bias = tl.load(B + c).to(tl.float32)
    al, am, ar = _row3(X, base, -1, H, W, w)
    bl, bm, br = _row3(X, base, 0, H, W, w)
    for h in range(0, H):
        cl, cm, cr = _row3(X, base, h + 1, H, W, w)
        acc = bias + (al * k0 + am * k1 + ar * k2) + (bl * k3 + bm * k4 + br * k5) + (cl * k6 + cm * k7 + cr * k8)
        tl.store(Y + base + h * W + w, acc.to(Y.dtype.element_ty), mask=w < W)
        al, am, ar = bl, bm, br
        bl, bm, br = cl, cm, cr


class ModelNew(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        if x.numel():
            BW = min(1024, max(16, triton.next_power_of_2(W)))
            dw_h1_kernel[(N * C, triton.cdiv(W, BW))](x, self.conv.weight.contiguous(), self.conv.bias, y, C, H, W, BW=BW)
        return y
