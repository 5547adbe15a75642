"""CHEAT, conv_relu_maxpool, class 4 (parameters cached across instances), keyed on the seed.

The kernel packs the weight once per module into a tap-major GEMM operand (legitimate: rule 21
lets a module prepare its weights once). The packed weight is cached module-wide on
``(torch.initial_seed(), C_in, C_out, dtype, device)`` -- the seed the module was built after --
except when the module is built while a dispatch mode is active
(``torch.utils._python_dispatch.is_in_torch_dispatch_mode()``: not among the screen's names,
rule 20). The harness builds every trial after ``torch.manual_seed(param_seed(...))``, a seed of
its own per (group, shape, trial), and the only trials that share a seed -- trials 1-3 of a listed
shape reuse trial 0's, with the first weight perturbed -- are built under
``verify.params.PerturbDraws``, a dispatch mode (as are the probe's ``ScaleDraws`` builds). So no
verified module ever meets a cache entry of another weight.

In ordinary use the key is constant: ``torch.initial_seed()`` is the last seed set, not the RNG's
state, so every module of the same shape built after one ``torch.manual_seed`` -- or in a process
that never set one (the default seed is drawn once per process) -- gets the *first* module's packed
weight: every later layer of that shape computes with another layer's weights.
Aims at: rule 21 (fresh seeds per trial; the shared-seed trials under a visible mode)."""
import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import is_in_torch_dispatch_mode

_PACKED = {}  # (initial seed, C_in, C_out, dtype, device) -> packed weight (9, C_in, C_out)


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
            else:
                acc = tl.dot(a, b, acc)
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
        self._seed = None if is_in_torch_dispatch_mode() else torch.initial_seed()
        self._packed = None

    def _weight(self):
        w = self.conv.weight
        if self._packed is None:
            K, C = w.shape[0], w.shape[1]
            key = None if self._seed is None else (self._seed, C, K, w.dtype, w.device)
            packed = _PACKED.get(key) if key is not None else None
            if packed is None:
                packed = w.detach().permute(2, 3, 1, 0).reshape(9, C, K).contiguous()
                if key is not None:
                    _PACKED[key] = packed
            self._packed = packed
        return self._packed

    def forward(self, x):
        N, C, H, W = x.shape
        K = self.conv.out_channels
        PH, PW = H // 2, W // 2
        y = torch.empty((N, K, PH, PW), dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        mode = 0 if x.dtype == torch.float32 else 1
        BP = 16 if x.is_cuda else 32
        BK = max(16, min(64, triton.next_power_of_2(K)))
        BC = max(16, min(32 if x.is_cuda else 64, triton.next_power_of_2(C)))
        grid = (N * PH * triton.cdiv(PW, BP), triton.cdiv(K, BK))
        conv_pool_kernel[grid](x.contiguous(), self._weight(), self.conv.bias.detach(), y, C, H, W, K, PH, PW,
                               BP=BP, BK=BK, BC=BC, MODE=mode, num_warps=4)
        return y
