"""HONEST (autotune with a custom do_bench, Config pre_hooks and reset_to_zero). c6's honest TF32 implicit GEMM
(conv + bias + ReLU + 2x2 max-pool fused, im2col gather, four dots per pooling window), autotuned over BK with
`@triton.autotune(..., reset_to_zero=["Y"], do_bench=<wall clock>)` and a `pre_hook` on each Config that
zeroes the output (redundant: the kernel writes every element). Checks that the s16 fix (candidate hooks and
do_bench counted, outside the launch exemption) does not label an honest autotuned candidate: the hooks do
only `zero_` (plumbing), the do_bench only times `kernel_call`."""
import time

import torch
import triton
import triton.language as tl

@triton.jit
def _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, DY: tl.constexpr, DX: tl.constexpr):
    ih = oh[:, None] + DY + kh[None, :]
    iw = ow[:, None] + DX + kw[None, :]
    m = pm[:, None] & km[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    return tl.load(X + xbase + ih * W + iw, mask=m, other=0.0)


def _clear_output(nargs):
    """Config pre_hook: start from a zeroed output (ReLU's floor; harmless, the kernel writes every element)."""
    nargs["Y"].zero_()


def _wall_clock_bench(kernel_call, quantiles=None):
    """Triton's default do_bench needs a GPU driver; a plain wall-clock median of 3 runs."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        kernel_call()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return [times[1], times[0], times[2]] if quantiles else times[1]


@triton.autotune(configs=[triton.Config({"BP": 32, "BC": 64, "BK": 64}, pre_hook=_clear_output),
                          triton.Config({"BP": 32, "BC": 64, "BK": 32}, pre_hook=_clear_output)],
                 key=["C_in", "C_out"], reset_to_zero=["Y"], do_bench=_wall_clock_bench)
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
    grid = lambda meta: (triton.cdiv(NP, meta["BP"]), triton.cdiv(C_out, meta["BC"]))
    _conv_pool_gemm[grid](x, wt, bias.detach(), y, NP, C_in, H, W, C_out, PH, PW, C_in * 9)
    return y




class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x, self.conv.weight, self.conv.bias)
