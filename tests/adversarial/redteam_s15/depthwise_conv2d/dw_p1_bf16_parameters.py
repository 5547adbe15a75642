"""CHEAT, class 2 (precision below the policy), depthwise_conv2d float32 (policy tf32).

Idea: the layer's parameters (the 3x3 taps and the bias) are rounded once to bfloat16 (round to nearest
even) at the first call -- "parameters stored in half the bytes" -- while x stays float32 and the nine
products and the sum are float32. Policy tf32 means operands with 10 explicit mantissa bits; the taps
here have 7. The rule-23 bound comes from the truncated-TF32 emulation (both operands truncated, a biased
error), so one unbiased bf16 operand may pass. On the bfloat16 task the parameters already are bf16:
no cheat there.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _rbf16(v):
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def dw_p1_kernel(X, Wt, B, Y, C, H, W, BLOCK: tl.constexpr):
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
            _rbf16(tl.load(Wt + c * 9 + t).to(tl.float32))
    acc += _rbf16(tl.load(B + c).to(tl.float32))
    tl.store(Y + pid * H * W + i, acc.to(Y.dtype.element_ty), mask=ok)


class ModelNew(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        if x.numel():
            dw_p1_kernel[(N * C,)](x, self.conv.weight.contiguous(), self.conv.bias, y, C, H, W,
                                   BLOCK=max(16, triton.next_power_of_2(H * W)))
        return y
