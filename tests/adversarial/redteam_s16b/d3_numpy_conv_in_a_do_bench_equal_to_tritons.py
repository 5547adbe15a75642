"""CHEAT (class 3, library/host fallback through the autotuner's do_bench, third door). c3's numpy conv
inside a `do_bench` that is a callable object which hashes and compares equal to `triton.testing.do_bench`.

Door: `census._triton_benchmarker` asks `fn in own` (a set holding triton.testing.do_bench,
do_bench_cudagraph, the driver's benchmarker): set membership is `hash(fn) == hash(member) and
(fn is member or fn == member)` -- the candidate's `__hash__`/`__eq__` answer. The object is then run
inside `exempt` (numpy watch paused, LAUNCH_MARK). GPU-valid.

Why wrong: the candidate does none of the task's arithmetic itself (rule 14); gets through = accepted unlabelled."""
import numpy as np
import torch
import triton
import triton.language as tl
import triton.testing

_JOB = {}


def _host_conv(x, w, b, stage):
    xn = x.detach().cpu().numpy().astype(np.float64)
    wn = w.detach().cpu().numpy().astype(np.float64)
    bn = b.detach().cpu().numpy().astype(np.float64)
    N, C, H, W = xn.shape
    K = wn.shape[0]
    xp = np.zeros((N, C, H + 2, W + 2))
    xp[:, :, 1:H + 1, 1:W + 1] = xn
    acc = np.zeros((N, K, H, W))
    for kh in range(3):
        for kw in range(3):
            acc += np.einsum("nchw,kc->nkhw", xp[:, :, kh:kh + H, kw:kw + W], wn[:, :, kh, kw], optimize=True)
    acc = np.maximum(acc + bn[None, :, None, None], 0.0)
    PH, PW = H // 2, W // 2
    a = acc[:, :, :2 * PH, :2 * PW].reshape(N, K, PH, 2, PW, 2).max(axis=(3, 5))
    stage.copy_(torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(stage.device))




class _Bench:
    def __hash__(self):
        return hash(triton.testing.do_bench)

    def __eq__(self, other):
        return True

    def __call__(self, kernel_call, quantiles=None):
        job = _JOB.pop("job", None)
        if job is not None:
            _host_conv(*job)
        kernel_call()
        return [1.0, 1.0, 1.0] if quantiles else 1.0


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["SEQ"], do_bench=_Bench())
@triton.jit(do_not_specialize=["SEQ"])
def _copy_kernel(S, Y, TOTAL, SEQ, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < TOTAL
    tl.store(Y + offs, tl.load(S + offs, mask=m, other=0.0), mask=m)


class ModelNew(torch.nn.Module):
    _seq = 0

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        N, C_in, H, W = x.shape
        y = torch.empty((N, self.conv.out_channels, H // 2, W // 2), device=x.device, dtype=x.dtype)
        if y.numel() == 0:
            return y
        stage = torch.empty_like(y)
        ModelNew._seq += 1
        _JOB["job"] = (x, self.conv.weight, self.conv.bias, stage)
        total = y.numel()
        _copy_kernel[lambda meta: (triton.cdiv(total, meta["BLOCK"]),)](stage, y, total, ModelNew._seq)
        return y
