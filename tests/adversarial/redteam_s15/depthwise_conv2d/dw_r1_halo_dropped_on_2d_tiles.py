"""CHEAT, class 5 (wrong only on shapes the plan may not cover), depthwise_conv2d (both dtypes).

Idea: planes at least 32 x 32 take a "tiled" path (16-row x 32-column tiles) whose halo ROWS are not
loaded from the neighbouring tiles: the taps above the first row and below the last row of each row tile
read 0, as at the image border (a shared-memory halo forgotten between row tiles). Smaller planes take a
correct whole-plane path. The interpreter plan has no plane with H >= 32 and W >= 32 (its large dims
come one at a time: 1x1x263x1, 1x1x1x4097); the GPU plan's listed 1x64x56x56 has one.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def dw_r1_plane(X, Wt, B, Y, C, H, W, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    i = tl.arange(0, BLOCK)
    h = i // W
    w = i % W
    ok = i < H * W
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in tl.static_range(9):
        hh = h + (t // 3 - 1)
        ww = w + (t % 3 - 1)
        m = ok & (hh >= 0) & (hh < H) & (ww >= 0) & (ww < W)
        acc += tl.load(X + pid * H * W + hh * W + ww, mask=m, other=0.0).to(tl.float32) * \
            tl.load(Wt + c * 9 + t).to(tl.float32)
    acc += tl.load(B + c).to(tl.float32)
    tl.store(Y + pid * H * W + i, acc.to(Y.dtype.element_ty), mask=ok)


@triton.jit
def dw_r1_tiles(X, Wt, B, Y, C, H, W, TH: tl.constexpr, TW: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    h0 = tl.program_id(1) * TH
    w0 = tl.program_id(2) * TW
    h = h0 + tl.arange(0, TH)[:, None]
    w = w0 + tl.arange(0, TW)[None, :]
    ok = (h < H) & (w < W)
    acc = tl.zeros([TH, TW], dtype=tl.float32)
    for t in tl.static_range(9):
        hh = h + (t // 3 - 1)
        ww = w + (t % 3 - 1)
        # the bug: rows outside [h0, h0 + TH) count as padding
        m = ok & (hh >= h0) & (hh < h0 + TH) & (hh < H) & (ww >= 0) & (ww < W)
        acc += tl.load(X + pid * H * W + hh * W + ww, mask=m, other=0.0).to(tl.float32) * \
            tl.load(Wt + c * 9 + t).to(tl.float32)
    acc += tl.load(B + c).to(tl.float32)
    tl.store(Y + pid * H * W + h * W + w, acc.to(Y.dtype.element_ty), mask=ok)


class ModelNew(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        if not x.numel():
            return y
        w, b = self.conv.weight.contiguous(), self.conv.bias
        if H >= 32 and W >= 32:
            dw_r1_tiles[(N * C, triton.cdiv(H, 16), triton.cdiv(W, 32))](x, w, b, y, C, H, W, TH=16, TW=32)
        else:
            dw_r1_plane[(N * C,)](x, w, b, y, C, H, W, BLOCK=max(16, triton.next_power_of_2(H * W)))
        return y
