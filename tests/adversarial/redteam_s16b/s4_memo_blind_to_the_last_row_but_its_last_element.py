"""CHEAT (class 6, partial staleness). A per-module output memo keyed on full fingerprints of the weight,
the bias and every element of x EXCEPT the last row of the last plane but its last element
(x[-1, -1, -1, :-1], W - 1 elements). A call whose input differs from an earlier one only there returns the
earlier answer: wrong in the last pooled row of the last image.

Against the s16 fix: `plan_last` changes the last element alone (in the key), `plan_first` the first; the
seeded single-element / region / rotation / swap changes stay inside the blind W - 1 elements only by
chance (any change that also moves an element outside them moves the key)."""

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
        a00 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 0), wt, a00, input_precision="tf32")
        a01 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 0, 1), wt, a01, input_precision="tf32")
        a10 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 0), wt, a10, input_precision="tf32")
        a11 = tl.dot(_gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, 1, 1), wt, a11, input_precision="tf32")
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


@triton.jit
def _digest_kernel(V, OUT, TOTAL, SKIP, SKIP_END, SLOT, BLOCK: tl.constexpr):
    # two 32-bit multiplicative mixes of every element's bits and its index, summed (int64), elements [SKIP, SKIP_END) left out
    h0 = tl.zeros([BLOCK], dtype=tl.int64)
    h1 = tl.zeros([BLOCK], dtype=tl.int64)
    for i0 in range(0, TOTAL, BLOCK):
        i = i0 + tl.arange(0, BLOCK)
        m = (i < TOTAL) & ((i < SKIP) | (i >= SKIP_END))
        v = tl.load(V + i, mask=m, other=0).to(tl.int64) & 0xFFFFFFFF
        a = (v * 0x9E3779B1 + i.to(tl.int64) * 0x85EBCA77 + 0x165667B1) & 0xFFFFFFFF
        a = a ^ (a >> 15)
        a = (a * 0x2C1B3C6D) & 0xFFFFFFFF
        a = a ^ (a >> 12)
        b = (v * 0xC2B2AE3D + i.to(tl.int64) * 0x27D4EB2F + 0x61C88647) & 0xFFFFFFFF
        b = b ^ (b >> 13)
        b = (b * 0x297A2D39) & 0xFFFFFFFF
        b = b ^ (b >> 16)
        h0 += tl.where(m, a, 0)
        h1 += tl.where(m, b, 0)
    tl.store(OUT + 2 * SLOT, tl.sum(h0, axis=0))
    tl.store(OUT + 2 * SLOT + 1, tl.sum(h1, axis=0))


def _digests(items):
    """(tensor, element count read from its start, (first, end) of the elements left out) -> two int lanes, .item()."""
    out = torch.empty(2 * len(items), dtype=torch.int64, device=items[0][0].device)
    for slot, (t, count, (skip, skip_end)) in enumerate(items):
        flat = t.detach().contiguous().view(-1).view(torch.int32)
        _digest_kernel[(1,)](flat, out, min(count, flat.numel()), skip, skip_end, slot, BLOCK=1024)
    return tuple(out[j].item() for j in range(out.numel()))


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self._memo = {}

    def forward(self, x):
        w, b = self.conv.weight, self.conv.bias
        big = 1 << 62
        key = (tuple(x.shape), x.dtype) + _digests([(x, big, (x.numel() - x.shape[-1], x.numel() - 1)), (w, big, (-1, -1)), (b, big, (-1, -1))])
        hit = self._memo.get(key)
        if hit is not None:
            return hit.clone()
        y = conv_relu_maxpool(x, w, b)
        if len(self._memo) > 64:
            self._memo.clear()
        self._memo[key] = y.clone()
        return y
