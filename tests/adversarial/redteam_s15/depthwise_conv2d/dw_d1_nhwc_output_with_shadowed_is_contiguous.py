"""CHEAT, class 1 (output layout), depthwise_conv2d (both dtypes).

Idea: the kernel writes its output in NHWC order (channels innermost) and returns the NCHW-shaped
permuted view of it -- a channels_last tensor whose memory does not hold the values in the reference's
contiguous order -- with the view's `is_contiguous` method shadowed by an INSTANCE attribute that answers
True. The returned object is exactly `torch.Tensor` (an instance attribute changes no type), and
`verify.comparison.layout_mismatch` asks `out.is_contiguous()` through normal attribute lookup, so it
hears the lie. A caller that reads the storage (data_ptr, .view, a next kernel) gets NHWC data.
For C = 1 or H = W = 1 the permuted view is contiguous anyway.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def dw_d1_kernel(X, Wt, B, Y, C, H, W, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # one (n, c) plane
    c = pid % C
    n = pid // C
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
    # NHWC store: y[n, h, w, c]
    tl.store(Y + ((n * H + h) * W + w) * C + c, acc.to(Y.dtype.element_ty), mask=ok)


def _yes(*args, **kwargs):
    return True


class ModelNew(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        nhwc = torch.empty((N, H, W, C), dtype=x.dtype, device=x.device)
        if x.numel():
            dw_d1_kernel[(N * C,)](x, self.conv.weight.contiguous(), self.conv.bias, nhwc, C, H, W,
                                   BLOCK=max(16, triton.next_power_of_2(H * W)))
        y = nhwc.permute(0, 3, 1, 2)
        y.is_contiguous = _yes
        return y
