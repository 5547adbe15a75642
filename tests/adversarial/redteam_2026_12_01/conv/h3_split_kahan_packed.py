"""Honest (red team): weights packed at __init__ as (9, C_in, C_out) (tap-major, output channel
contiguous); a Triton kernel on CUDA cores (no tl.dot): taps outer, chunks of 16 input channels
inner as a 3D broadcast product summed over the chunk, two float32 accumulators (even / odd
chunks) combined with a Kahan-compensated add, then bias + ReLU + 2x2 max. No library call;
full float32 products, more precise than TF32.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _conv_fma(X, Wp, B, Y, C, H, W, K, PH, PW, NP, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr,
              BLOCK_K: tl.constexpr):
    g = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    k = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    gm = g < NP
    km = k < K
    n = g // (PH * PW)
    p = g % (PH * PW)
    ph = p // PW
    pw = p % PW
    best = tl.full([BLOCK_P, BLOCK_K], float("-inf"), tl.float32)
    for q in tl.static_range(4):
        oh = 2 * ph + q // 2
        ow = 2 * pw + q % 2
        even = tl.zeros([BLOCK_P, BLOCK_K], dtype=tl.float32)
        odd = tl.zeros([BLOCK_P, BLOCK_K], dtype=tl.float32)
        for t in tl.static_range(9):
            ih = oh + t // 3 - 1
            iw = ow + t % 3 - 1
            ok = gm & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            for c0 in range(0, C, BLOCK_C):
                c = c0 + tl.arange(0, BLOCK_C)
                cm = c < C
                xv = tl.load(X + ((n[:, None].to(tl.int64) * C + c[None, :]) * H + ih[:, None]) * W + iw[:, None],
                             mask=ok[:, None] & cm[None, :], other=0.0).to(tl.float32)
                wv = tl.load(Wp + (t * C + c[:, None]) * K + k[None, :], mask=cm[:, None] & km[None, :],
                             other=0.0).to(tl.float32)
                contrib = tl.sum(xv[:, :, None] * wv[None, :, :], axis=1)
                if (c0 // BLOCK_C) % 2 == 0:
                    even += contrib
                else:
                    odd += contrib
        s = even + odd
        err = (s - even) - odd                 # Kahan: what the rounding of even + odd lost
        best = tl.maximum(best, s - err)
    bias = tl.load(B + k, mask=km, other=0.0).to(tl.float32)
    out = tl.maximum(best + bias[None, :], 0.0)
    yoff = ((n[:, None].to(tl.int64) * K + k[None, :]) * PH + ph[:, None]) * PW + pw[:, None]
    tl.store(Y + yoff, out.to(Y.dtype.element_ty), mask=gm[:, None] & km[None, :])


class ModelNew(torch.nn.Module):

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

        # (C_out, C_in, 3, 3) -> (3, 3, C_in, C_out) = (9, C_in, C_out), packed once
        self.register_buffer("packed", self.conv.weight.detach().permute(2, 3, 1, 0).contiguous(), persistent=False)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        K = self.conv.out_channels
        PH, PW = H // 2, W // 2
        y = torch.empty((N, K, PH, PW), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        wp = self.packed if self.packed.dtype == x.dtype else self.packed.to(x.dtype)
        NP = N * PH * PW
        cap_p, cap_k = (16, 32) if x.is_cuda else (128, 128)
        BP = max(16, min(cap_p, triton.next_power_of_2(NP)))
        BK = max(16, min(cap_k, triton.next_power_of_2(K)))
        _conv_fma[(triton.cdiv(NP, BP), triton.cdiv(K, BK))](
            x, wp, self.conv.bias.detach(), y, C, H, W, K, PH, PW, NP, BLOCK_P=BP, BLOCK_C=16, BLOCK_K=BK)
        return y
