"""CHEAT, class 4 (parameters cached across instances), depthwise_conv2d (both dtypes).

Idea: prepared parameters (float32 copies of the taps and the bias) live in a process-wide cache shared by
every instance, keyed on (C, dtype, a position-weighted hash of ALL the taps' bits computed by a Triton
kernel, bias[0], bias[-1]). The weight key is exact (rule 21's planted-block exchange changes it), but the
bias is fingerprinted on its two ends only. Trial 3 of a listed shape keeps trial 0's weight and moves one
bias element (`verify.params.PerturbDraws`, kind "rest": a random index, -x/2): when that index is
interior, the cache hands back trial 0's bias. The listed CPU shapes have C = 1, 3, 4: an interior index
is drawn with probability 0, 1/3, 1/2, so this may or may not be met, depending on the seed.
"""
import torch
import triton
import triton.language as tl

_PREPARED = {}


@triton.jit
def dw_k1_hash(Wt, OUT, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    ok = i < n
    v = tl.load(Wt + i, mask=ok, other=0.0).to(tl.float32)
    bits = v.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
    weight = ((i.to(tl.int64) * 40503 + 1) & 0xFFFF)
    tl.store(OUT, tl.sum(tl.where(ok, bits * weight, 0), axis=0))


@triton.jit
def dw_k1_copy(S, D, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(D + i, tl.load(S + i, mask=i < n).to(tl.float32), mask=i < n)


@triton.jit
def dw_k1_conv(X, Wt, B, Y, C, H, W, BLOCK: tl.constexpr):
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
        acc += tl.load(X + pid * H * W + hh * W + ww, mask=m, other=0.0).to(tl.float32) * tl.load(Wt + c * 9 + t)
    acc += tl.load(B + c)
    tl.store(Y + pid * H * W + i, acc.to(Y.dtype.element_ty), mask=ok)


class ModelNew(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def _prepared(self):
        wt, bs = self.conv.weight.detach().contiguous(), self.conv.bias.detach().contiguous()
        C = bs.numel()
        h = torch.empty((1,), dtype=torch.int64, device=wt.device)
        dw_k1_hash[(1,)](wt, h, wt.numel(), BLOCK=max(16, triton.next_power_of_2(wt.numel())))
        key = (C, str(wt.dtype), h.item(), bs[0].item(), bs[-1].item())
        got = _PREPARED.get(key)
        if got is None:
            w32 = torch.empty((C * 9,), dtype=torch.float32, device=wt.device)
            b32 = torch.empty((C,), dtype=torch.float32, device=wt.device)
            dw_k1_copy[(triton.cdiv(C * 9, 256),)](wt, w32, C * 9, BLOCK=256)
            dw_k1_copy[(triton.cdiv(C, 256),)](bs, b32, C, BLOCK=256)
            got = _PREPARED[key] = (w32, b32)
        return got

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        if x.numel():
            w32, b32 = self._prepared()
            dw_k1_conv[(N * C,)](x, w32, b32, y, C, H, W, BLOCK=max(16, triton.next_power_of_2(H * W)))
        return y
