"""HONEST, conv_relu_maxpool, Winograd F(2x2, 3x3) (unlike the ladder's direct and implicit-GEMM
convolutions): the 2x2 output tile of Winograd's minimal filtering algorithm is exactly one
MaxPool2d(2) window, so each pooled output is one Winograd tile, reduced in registers.

Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks" (CVPR 2016), F(2x2, 3x3):
Y = A^T [ sum_c (G g_c G^T) . (B^T d_c B) ] A with d_c the 4x4 input patch of channel c (padding 1
makes the patch of pooled output (ph, pw) start at row 2 ph - 1, column 2 pw - 1),
B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]], G = [[1,0,0],[.5,.5,.5],[.5,-.5,.5],[0,0,1]],
A^T = [[1,1,1,0],[0,1,-1,-1]]. The filter transform U = G g G^T is made once per module, in float32,
from the module's weight (preparing weights once is allowed, rule 21; here at the first call, by a
Triton kernel: its first version used ``g @ w @ g.T`` and was labelled ``bmm,matmul,mm``). The channel sum of the 16 transformed positions is 16 float32 GEMMs ``tl.dot`` with
``input_precision="ieee"`` (no TF32: float32 products), then A^T M A, + bias, ReLU, max of the tile.
Everything in float32 (bfloat16 inputs are upcast, the output rounded once). Its rounding differs
from a direct convolution's (the transforms add and halve), but stays far below TF32's."""
import torch
import triton
import triton.language as tl


@triton.jit
def _patch(X, base, ih, iw, cs, H, W, C, mrow, i: tl.constexpr, j: tl.constexpr):
    r = ih + i + 0 * iw  # a tensor: a scalar & tensor mask is no bool mask on the interpreter
    c = iw + j
    ok = mrow & (r >= 0) & (r < H) & (c >= 0) & (c < W)
    return tl.load(X + base + (cs[None, :].to(tl.int64) * H + r[:, None]) * W + c[:, None],
                   mask=ok[:, None] & (cs < C)[None, :], other=0.0).to(tl.float32)


@triton.jit
def winograd_pool_kernel(X, U, B, Y, C, H, W, K, PH, PW, BP: tl.constexpr, BK: tl.constexpr, BC: tl.constexpr):
    # X (N, C, H, W); U (16, C, K) float32 transformed filter, position-major; Y (N, K, PH, PW)
    pid = tl.program_id(0)
    n_pb = tl.cdiv(PW, BP)
    pb = pid % n_pb
    ph = (pid // n_pb) % PH
    n = pid // (n_pb * PH)
    pw = pb * BP + tl.arange(0, BP)
    mrow = pw < PW
    ih = 2 * ph - 1
    iw = 2 * pw - 1
    ks = tl.program_id(1) * BK + tl.arange(0, BK)
    base = n.to(tl.int64) * C * H * W
    z = tl.zeros([BP, BK], dtype=tl.float32)
    m00, m01, m02, m03 = z, z, z, z
    m10, m11, m12, m13 = z, z, z, z
    m20, m21, m22, m23 = z, z, z, z
    m30, m31, m32, m33 = z, z, z, z
    for c0 in range(0, C, BC):
        cs = c0 + tl.arange(0, BC)
        d00 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 0, 0)
        d01 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 0, 1)
        d02 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 0, 2)
        d03 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 0, 3)
        d10 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 1, 0)
        d11 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 1, 1)
        d12 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 1, 2)
        d13 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 1, 3)
        d20 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 2, 0)
        d21 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 2, 1)
        d22 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 2, 2)
        d23 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 2, 3)
        d30 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 3, 0)
        d31 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 3, 1)
        d32 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 3, 2)
        d33 = _patch(X, base, ih, iw, cs, H, W, C, mrow, 3, 3)
        # s = B^T d (rows)
        s00, s01, s02, s03 = d00 - d20, d01 - d21, d02 - d22, d03 - d23
        s10, s11, s12, s13 = d10 + d20, d11 + d21, d12 + d22, d13 + d23
        s20, s21, s22, s23 = d20 - d10, d21 - d11, d22 - d12, d23 - d13
        s30, s31, s32, s33 = d10 - d30, d11 - d31, d12 - d32, d13 - d33
        # v = s B (columns), then the 16 channel GEMMs
        uo = (cs[:, None] < C) & (ks[None, :] < K)
        up = U + cs[:, None].to(tl.int64) * K + ks[None, :]
        CK = C * K
        m00 = tl.dot(s00 - s02, tl.load(up + 0 * CK, mask=uo, other=0.0), m00, input_precision="ieee")
        m01 = tl.dot(s01 + s02, tl.load(up + 1 * CK, mask=uo, other=0.0), m01, input_precision="ieee")
        m02 = tl.dot(s02 - s01, tl.load(up + 2 * CK, mask=uo, other=0.0), m02, input_precision="ieee")
        m03 = tl.dot(s01 - s03, tl.load(up + 3 * CK, mask=uo, other=0.0), m03, input_precision="ieee")
        m10 = tl.dot(s10 - s12, tl.load(up + 4 * CK, mask=uo, other=0.0), m10, input_precision="ieee")
        m11 = tl.dot(s11 + s12, tl.load(up + 5 * CK, mask=uo, other=0.0), m11, input_precision="ieee")
        m12 = tl.dot(s12 - s11, tl.load(up + 6 * CK, mask=uo, other=0.0), m12, input_precision="ieee")
        m13 = tl.dot(s11 - s13, tl.load(up + 7 * CK, mask=uo, other=0.0), m13, input_precision="ieee")
        m20 = tl.dot(s20 - s22, tl.load(up + 8 * CK, mask=uo, other=0.0), m20, input_precision="ieee")
        m21 = tl.dot(s21 + s22, tl.load(up + 9 * CK, mask=uo, other=0.0), m21, input_precision="ieee")
        m22 = tl.dot(s22 - s21, tl.load(up + 10 * CK, mask=uo, other=0.0), m22, input_precision="ieee")
        m23 = tl.dot(s21 - s23, tl.load(up + 11 * CK, mask=uo, other=0.0), m23, input_precision="ieee")
        m30 = tl.dot(s30 - s32, tl.load(up + 12 * CK, mask=uo, other=0.0), m30, input_precision="ieee")
        m31 = tl.dot(s31 + s32, tl.load(up + 13 * CK, mask=uo, other=0.0), m31, input_precision="ieee")
        m32 = tl.dot(s32 - s31, tl.load(up + 14 * CK, mask=uo, other=0.0), m32, input_precision="ieee")
        m33 = tl.dot(s31 - s33, tl.load(up + 15 * CK, mask=uo, other=0.0), m33, input_precision="ieee")
    # t = A^T M (rows), y = t A (columns)
    t00, t01, t02, t03 = m00 + m10 + m20, m01 + m11 + m21, m02 + m12 + m22, m03 + m13 + m23
    t10, t11, t12, t13 = m10 - m20 - m30, m11 - m21 - m31, m12 - m22 - m32, m13 - m23 - m33
    y00 = t00 + t01 + t02
    y01 = t01 - t02 - t03
    y10 = t10 + t11 + t12
    y11 = t11 - t12 - t13
    best = tl.maximum(tl.maximum(y00, y01), tl.maximum(y10, y11))
    bias = tl.load(B + ks, mask=ks < K, other=0.0).to(tl.float32)
    out = tl.maximum(best + bias[None, :], 0.0)
    y_off = ((n.to(tl.int64) * K + ks[None, :]) * PH + ph) * PW + pw[:, None]
    tl.store(Y + y_off, out.to(Y.dtype.element_ty), mask=mrow[:, None] & (ks < K)[None, :])


@triton.jit
def filter_transform_kernel(Wt, U, C, K, BLOCK: tl.constexpr):
    """U = G g G^T for every (k, c): Wt (K, C, 3, 3) -> U (16, C, K) float32, position-major."""
    i = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)  # i = k * C + c
    m = i < K * C
    k = i // C
    c = i % C
    g00 = tl.load(Wt + i * 9 + 0, mask=m, other=0.0).to(tl.float32)
    g01 = tl.load(Wt + i * 9 + 1, mask=m, other=0.0).to(tl.float32)
    g02 = tl.load(Wt + i * 9 + 2, mask=m, other=0.0).to(tl.float32)
    g10 = tl.load(Wt + i * 9 + 3, mask=m, other=0.0).to(tl.float32)
    g11 = tl.load(Wt + i * 9 + 4, mask=m, other=0.0).to(tl.float32)
    g12 = tl.load(Wt + i * 9 + 5, mask=m, other=0.0).to(tl.float32)
    g20 = tl.load(Wt + i * 9 + 6, mask=m, other=0.0).to(tl.float32)
    g21 = tl.load(Wt + i * 9 + 7, mask=m, other=0.0).to(tl.float32)
    g22 = tl.load(Wt + i * 9 + 8, mask=m, other=0.0).to(tl.float32)
    # r = G g (4 x 3): rows g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2
    r00, r01, r02 = g00, g01, g02
    r10, r11, r12 = 0.5 * (g00 + g10 + g20), 0.5 * (g01 + g11 + g21), 0.5 * (g02 + g12 + g22)
    r20, r21, r22 = 0.5 * (g00 - g10 + g20), 0.5 * (g01 - g11 + g21), 0.5 * (g02 - g12 + g22)
    r30, r31, r32 = g20, g21, g22
    out = U + c * K + k
    CK = C * K
    tl.store(out + 0 * CK, r00, mask=m)
    tl.store(out + 1 * CK, 0.5 * (r00 + r01 + r02), mask=m)
    tl.store(out + 2 * CK, 0.5 * (r00 - r01 + r02), mask=m)
    tl.store(out + 3 * CK, r02, mask=m)
    tl.store(out + 4 * CK, r10, mask=m)
    tl.store(out + 5 * CK, 0.5 * (r10 + r11 + r12), mask=m)
    tl.store(out + 6 * CK, 0.5 * (r10 - r11 + r12), mask=m)
    tl.store(out + 7 * CK, r12, mask=m)
    tl.store(out + 8 * CK, r20, mask=m)
    tl.store(out + 9 * CK, 0.5 * (r20 + r21 + r22), mask=m)
    tl.store(out + 10 * CK, 0.5 * (r20 - r21 + r22), mask=m)
    tl.store(out + 11 * CK, r22, mask=m)
    tl.store(out + 12 * CK, r30, mask=m)
    tl.store(out + 13 * CK, 0.5 * (r30 + r31 + r32), mask=m)
    tl.store(out + 14 * CK, 0.5 * (r30 - r31 + r32), mask=m)
    tl.store(out + 15 * CK, r32, mask=m)


def filter_transform(w: torch.Tensor) -> torch.Tensor:
    """U = G g G^T for every (k, c): (K, C, 3, 3) -> (16, C, K) float32, position-major (a Triton kernel:
    weight preparation with torch arithmetic inside a verified call would be counted as a library call)."""
    K, C = w.shape[0], w.shape[1]
    u = torch.empty((16, C, K), dtype=torch.float32, device=w.device)
    filter_transform_kernel[(triton.cdiv(K * C, 256),)](w.detach().contiguous(), u, C, K, BLOCK=256)
    return u


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self._u = None

    def forward(self, x):
        N, C, H, W = x.shape
        K = self.conv.out_channels
        PH, PW = H // 2, W // 2
        y = torch.empty((N, K, PH, PW), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        w = self.conv.weight
        key = (w.data_ptr(), w._version, w.device)
        if self._u is None or self._u[0] != key:
            self._u = (key, filter_transform(w))
        BP = 16 if x.is_cuda else 32
        BK = max(16, min(32 if x.is_cuda else 64, triton.next_power_of_2(K)))
        BC = max(16, min(16 if x.is_cuda else 64, triton.next_power_of_2(C)))
        grid = (N * PH * triton.cdiv(PW, BP), triton.cdiv(K, BK))
        winograd_pool_kernel[grid](x.contiguous(), self._u[1], self.conv.bias.detach(), y, C, H, W, K, PH, PW,
                                   BP=BP, BK=BK, BC=BC, num_warps=4)
        return y
