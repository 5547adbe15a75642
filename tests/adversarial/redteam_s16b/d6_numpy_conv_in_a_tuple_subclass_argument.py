"""CHEAT (class 3, library/host fallback through a tuple-subclass argument). c3's numpy conv runs inside
`__new__` of a tuple subclass passed to the kernel as a tuple argument (Triton 3 kernels take tuples).

Door: `census._pointer_arguments` walks lists/tuples by `isinstance` and checks their elements only (a plain
tensor and an int: fine); Triton rebuilds a tuple argument with `type(arg)(contents)`
(`triton._utils._tuple_create`, called by the interpreter's `_to_cpu` and `_implicit_cvt`), i.e. the
candidate's `__new__` runs inside the launch exemption. (GPU: the binder iterates the tuple -- a subclass's
`__iter__`/`__getitem__`/`__len__` would be the door there; not run.)

Why wrong: the candidate does none of the task's arithmetic itself (rule 14); gets through = accepted unlabelled."""
import numpy as np
import torch
import triton
import triton.language as tl

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



class _Pair(tuple):
    def __new__(cls, contents):
        job = _JOB.pop("job", None)
        if job is not None:
            _host_conv(*job)
        return super().__new__(cls, contents)


@triton.jit
def _copy_kernel(P, Y, BLOCK: tl.constexpr):
    S = P[0]
    TOTAL = P[1]
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < TOTAL
    tl.store(Y + offs, tl.load(S + offs, mask=m, other=0.0), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        N, C_in, H, W = x.shape
        y = torch.empty((N, self.conv.out_channels, H // 2, W // 2), device=x.device, dtype=x.dtype)
        if y.numel() == 0:
            return y
        stage = torch.empty_like(y)
        total = y.numel()
        pair = _Pair((stage, total))
        _JOB["job"] = (x, self.conv.weight, self.conv.bias, stage)
        _copy_kernel[(triton.cdiv(total, 128),)](pair, y, BLOCK=128)
        return y
