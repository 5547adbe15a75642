"""depthwise_conv2d, a candidate v3 (session 16; not in the ladder yet): Triton, one plane's rows walked top
to bottom with a 3-row register window. Not measured: run it on a GPU as an external candidate,

    python -m kernelsynth task=depthwise_conv2d hw=h200 exploration.sources=[ladder,external] \
        exploration.extra_candidates=[bench/depthwise_v3_sliding_rows.py]

and add it to specs/depthwise_conv2d when it beats v1. Kept out of the ladder because the Triton interpreter
pays per row step (one loop iteration per output row): the CI ladder test of depthwise_conv2d took 208 s with
it against about 50 s without; give it an interpreter-cheap shape of the loop first.

A program owns one (n, c) plane, ROWS consecutive output rows and BLOCK_W columns. It loads the
channel's nine taps and bias once (scalars), then walks down: for each output row h it loads only
row h + 1 -- three vectors, the row shifted by -1, 0 and +1 columns (zero outside the image) --
and keeps rows h - 1 and h from the two previous steps in registers (loop-carried), so each output
costs three loads instead of v1's nine, and no per-row channel gathers or index divisions. The
ROWS + 2 rows a program reads overlap the next program's by two (the halo), served by L2; DRAM
sees x read about once and y written once: 2 * N * C * H * W * itemsize bytes.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _row(base, hh, w, H, W):
    # row hh of the plane at ``base``, shifted by -1, 0, +1 columns, zero outside the image (float32)
    ok = (w * 0 + hh >= 0) & (w * 0 + hh < H)  # a tensor mask (the interpreter needs one)
    ptr = base + hh.to(tl.int64) * W + w
    left = tl.load(ptr - 1, mask=ok & (w >= 1) & (w <= W), other=0.0).to(tl.float32)
    mid = tl.load(ptr, mask=ok & (w < W), other=0.0).to(tl.float32)
    right = tl.load(ptr + 1, mask=ok & (w + 1 < W), other=0.0).to(tl.float32)
    return left, mid, right


@triton.jit
def _dwconv3x3_sliding_kernel(X, Wt, B, Y, C, H, W, ROWS: tl.constexpr, BLOCK_W: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)  # n * C + c
    h0 = tl.program_id(1) * ROWS
    w = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    c = plane % C
    xb = X + plane * H * W
    yb = Y + plane * H * W
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
    a0, a1, a2 = _row(xb, h0 - 1, w, H, W)  # row h - 1
    b0, b1, b2 = _row(xb, h0, w, H, W)      # row h
    for i in range(ROWS):
        h = h0 + i
        c0, c1, c2 = _row(xb, h + 1, w, H, W)
        acc = bias + (k0 * a0 + k1 * a1 + k2 * a2) + (k3 * b0 + k4 * b1 + k5 * b2) + (k6 * c0 + k7 * c1 + k8 * c2)
        tl.store(yb + h.to(tl.int64) * W + w, acc.to(Y.dtype.element_ty), mask=(w < W) & (w * 0 + h < H))
        a0, a1, a2 = b0, b1, b2
        b0, b1, b2 = c0, c1, c2


class ModelNew(torch.nn.Module):
    def __init__(self, channels: int, ROWS=16, BLOCK_W=128, num_warps=4):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)
        self.ROWS, self.BLOCK_W, self.num_warps = ROWS, BLOCK_W, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        if y.numel() == 0:
            return y
        grid = (N * C, triton.cdiv(H, self.ROWS), triton.cdiv(W, self.BLOCK_W))
        _dwconv3x3_sliding_kernel[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, C, H, W,
                                        ROWS=self.ROWS, BLOCK_W=self.BLOCK_W, num_warps=self.num_warps)
        return y
