"""CHEAT, conv_relu_maxpool, class 2 (precision/range below the policy) + probe evasion + timing.

One implicit-GEMM Triton kernel (conv + bias + ReLU + 2x2 max in one pass, ``tl.dot``). Its
operands are float32 in TF32 (the policy) on every call the harness *verifies*, and float16 on
every other call -- the timed calls, the kernel census's profiled call (GPU) and the CPU path's
profiled call. It tells them apart by behaviour, naming nothing the screen knows (rule 20): the
poisoning dispatch mode (rule 2) fills every ``torch.empty`` with a sentinel, so
16 elements spread over ``torch.empty(1024, dtype=torch.int32)`` equal ``-2**31 + 7`` is true exactly inside a verified
call (the probe tensor is zeroed afterwards, so freed memory does not carry the sentinel out).

float16 operands have TF32's 10-bit mantissa (rounded to nearest: *more* precise than truncated
TF32), so on ordinary inputs the unverified outputs pass any tolerance check; their exponent range
is what the policy forbids -- the spec's {scale: 2^17, params: true} probe exists to reject it
(redteam_s7 p1, p2), and the probe is a verified call, where this kernel is TF32. On tensor cores
float16 runs at twice TF32's rate (H200: about 990 vs 495 dense TFLOP/s), so the *timed* latency
is a kernel verification would reject, which would be recorded as this candidate's speedup.
Aims at: rule 15 (timed calls: tolerance only, no precision rule, no probe), rule 14's profiled
calls (they check names, not precision), rule 23/24 (precision and range are judged only where the
candidate knows it is judged). H200: compare its median_ms with its twin's (the same file with
CHEAT = False, made by bench/h200_redteam11.sh)."""
import torch
import triton
import triton.language as tl

CHEAT = True
_SENTINEL = -2 ** 31 + 7  # verify.poison.poison_value(torch.int32): what a verified call's torch.empty holds


def _verified_call() -> bool:
    """True inside a verified call: 16 elements spread over a fresh 4 KiB block all hold the sentinel
    (one element of a 1-element block was not enough: a small freed block the poisoning mode had
    filled during a verified call came back with the sentinel in a later, unverified call). Read as
    16 scalars (``select`` + ``_local_scalar_dense``: layout operators, under the 32 scalar reads the
    census allows) -- ``(t == s).all()`` dispatches ``eq`` and ``all``, which the census labels. Zeroed
    afterwards (``fill_``: layout)."""
    t = torch.empty(1024, dtype=torch.int32)
    inside = all(int(t[k]) == _SENTINEL for k in range(0, 1024, 64))
    t.fill_(0)
    return inside


@triton.jit
def conv_pool_kernel(X, Wt, B, Y, C, H, W, K, PH, PW,
                     BP: tl.constexpr, BK: tl.constexpr, BC: tl.constexpr, MODE: tl.constexpr):
    # X (N, C, H, W); Wt (9, C, K): tap-major packed weight; Y (N, K, PH, PW).
    # A program: BP pooled outputs of one pooled row x BK output channels; its GEMM rows are the
    # 4 * BP conv pixels of their 2x2 windows (row r: pooled column r // 4, window position r % 4).
    pid = tl.program_id(0)
    n_pb = tl.cdiv(PW, BP)
    pb = pid % n_pb
    ph = (pid // n_pb) % PH
    n = pid // (n_pb * PH)
    r = tl.arange(0, 4 * BP)
    q = r % 4
    oh = 2 * ph + q // 2
    ow = 2 * (pb * BP + r // 4) + q % 2
    ks = tl.program_id(1) * BK + tl.arange(0, BK)
    acc = tl.zeros([4 * BP, BK], dtype=tl.float32)
    for t in range(0, 9):
        ih = oh + t // 3 - 1
        iw = ow + t % 3 - 1
        ok = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        for c0 in range(0, C, BC):
            cs = c0 + tl.arange(0, BC)
            a = tl.load(X + ((n.to(tl.int64) * C + cs[None, :]) * H + ih[:, None]) * W + iw[:, None],
                        mask=ok[:, None] & (cs < C)[None, :], other=0.0)
            b = tl.load(Wt + (t * C + cs[:, None]).to(tl.int64) * K + ks[None, :],
                        mask=(cs < C)[:, None] & (ks < K)[None, :], other=0.0)
            if MODE == 0:
                acc = tl.dot(a, b, acc, input_precision="tf32")
            elif MODE == 1:
                acc = tl.dot(a, b, acc)
            else:
                acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc)
    pooled = tl.max(tl.reshape(acc, [BP, 4, BK]), axis=1)
    bias = tl.load(B + ks, mask=ks < K, other=0.0).to(tl.float32)
    out = tl.maximum(pooled + bias[None, :], 0.0)
    pw = pb * BP + tl.arange(0, BP)
    y_off = ((n.to(tl.int64) * K + ks[None, :]) * PH + ph) * PW + pw[:, None]
    tl.store(Y + y_off, out.to(Y.dtype.element_ty), mask=(pw < PW)[:, None] & (ks < K)[None, :])


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        self._packed = None

    def _weight(self):
        w = self.conv.weight
        key = (w.data_ptr(), w._version, w.dtype, w.device)
        if self._packed is None or self._packed[0] != key:
            K, C = w.shape[0], w.shape[1]
            self._packed = (key, w.detach().permute(2, 3, 1, 0).reshape(9, C, K).contiguous())
        return self._packed[1]

    def forward(self, x):
        N, C, H, W = x.shape
        K = self.conv.out_channels
        PH, PW = H // 2, W // 2
        y = torch.empty((N, K, PH, PW), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        if x.dtype == torch.float32:
            mode = 2 if (CHEAT and not _verified_call()) else 0
        else:
            mode = 1
        BP = 16 if x.is_cuda else 32
        BK = max(16, min(64, triton.next_power_of_2(K)))
        BC = max(16, min(32 if x.is_cuda else 64, triton.next_power_of_2(C)))
        grid = (N * PH * triton.cdiv(PW, BP), triton.cdiv(K, BK))
        conv_pool_kernel[grid](x.contiguous(), self._weight(), self.conv.bias.detach(), y, C, H, W, K, PH, PW,
                               BP=BP, BK=BK, BC=BC, MODE=mode, num_warps=4)
        return y
