"""Honest (red team): three Triton kernels -- im2col into a (N, 9*C_in, H*W) column buffer, a tiled
GEMM (tl.dot; TF32 for float32 on a GPU, as cuDNN does under allow_tf32; bf16 operands with fp32
accumulation for bfloat16) writing the conv map (N, C_out, H, W) in float32, then bias + ReLU +
2x2 max-pool. Buffers from torch.empty; weights viewed as (C_out, 9*C_in) at __init__-free cost.
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


@triton.jit
def _im2col(X, Col, C, H, W, total, BLOCK: tl.constexpr):
    # Col[n, c*9 + t, h*W + w] = x[n, c, h + t//3 - 1, w + t%3 - 1] (0 outside)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < total
    hw = i % (H * W)
    r = (i // (H * W)) % (C * 9)
    n = i // (H * W * C * 9)
    c = r // 9
    t = r % 9
    h = hw // W + t // 3 - 1
    w = hw % W + t % 3 - 1
    ok = m & (h >= 0) & (h < H) & (w >= 0) & (w < W)
    v = tl.load(X + ((n.to(tl.int64) * C + c) * H + h) * W + w, mask=ok, other=0.0)
    tl.store(Col + i, v, mask=m)


@triton.jit
def _gemm(A, Bm, Cout, M, Nn, Kd, sbn, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
          TF32: tl.constexpr):
    # per image n: Cout[n] (M x Nn) = A (M x Kd) @ Bm[n] (Kd x Nn)
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    n = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, Kd, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(A + rm[:, None] * Kd + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < Kd), other=0.0)
        b = tl.load(Bm + n.to(tl.int64) * sbn + rk[:, None] * Nn + rn[None, :],
                    mask=(rk[:, None] < Kd) & (rn[None, :] < Nn), other=0.0)
        if TF32:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
    tl.store(Cout + n.to(tl.int64) * scn + rm[:, None] * Nn + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < Nn))


class ModelNew(torch.nn.Module):

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        K = self.conv.out_channels
        w2 = self.conv.weight.detach().reshape(K, C * 9)
        if H // 2 == 0 or W // 2 == 0 or N == 0:
            return torch.empty((N, K, H // 2, W // 2), dtype=x.dtype, device=x.device)
        col = torch.empty((N, C * 9, H * W), dtype=x.dtype, device=x.device)
        total = col.numel()
        _im2col[(triton.cdiv(total, 512),)](x, col, C, H, W, total, BLOCK=512)
        conv = torch.empty((N, K, H, W), dtype=torch.float32, device=x.device)
        BM, BN, BK = 32, 32, 16
        grid = (triton.cdiv(K, BM), triton.cdiv(H * W, BN), N)
        _gemm[grid](w2, col, conv, K, H * W, C * 9, C * 9 * H * W, K * H * W, BM=BM, BN=BN, BK=BK,
                    TF32=x.dtype == torch.float32 and x.is_cuda)
        return relu_pool(conv, self.conv.bias.detach(), x.dtype)
