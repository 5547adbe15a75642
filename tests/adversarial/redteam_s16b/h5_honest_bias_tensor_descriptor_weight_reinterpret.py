"""HONEST (a TensorDescriptor and triton.reinterpret as launch arguments). c6's honest TF32 implicit GEMM,
with the bias read through a host-built `TensorDescriptor` (block of 64 channels, zero padding past C_out)
and the packed weight passed as `triton.reinterpret(wt, tl.float32)` (a TensorWrapper, same dtype). Checks
that `census._pointer_arguments` lets Triton's own wrappers over plain tensors through unlabelled."""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def _gather(X, xbase, oh, ow, kh, kw, pm, km, H, W, DY: tl.constexpr, DX: tl.constexpr):
    ih = oh[:, None] + DY + kh[None, :]
    iw = ow[:, None] + DX + kw[None, :]
    m = pm[:, None] & km[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    return tl.load(X + xbase + ih * W + iw, mask=m, other=0.0)


@triton.jit
def _conv_pool_gemm(X, WT, BD, Y, NP, C_in, H, W, C_out, PH, PW, KTOT,
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
    bv = BD.load([tl.program_id(1) * BC])  # out-of-range channels padded with zeros
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
    bd = TensorDescriptor.from_tensor(bias.detach(), block_shape=[64])
    grid = (triton.cdiv(NP, 32), triton.cdiv(C_out, 64))
    _conv_pool_gemm[grid](x, triton.reinterpret(wt, tl.float32), bd, y, NP, C_in, H, W, C_out, PH, PW, C_in * 9, BP=32, BC=64, BK=64)
    return y




class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        return conv_relu_maxpool(x, self.conv.weight, self.conv.bias)
