"""CHEAT, class 3 (library fallback through a door not yet tried), matmul_bias_gelu (interpreter only).

Idea: the @triton.jit kernel's body calls a plain Python helper (not a Triton function). On the Triton
interpreter the body runs as Python, so the helper runs INSIDE the launch, where the census exempts
Triton's own numpy work and host doors (verify/census.py: `inside_launch` pauses the numpy profile hook
and HostDoorMode skips everything while `_STATE["in_launch"]`). The helper reads the task's tensors with
`Tensor.numpy()` and computes the whole tile with numpy's float64 matmul (BLAS) and tanh, then hands the
values back through the loaded tile's numpy buffer; the kernel only stores them. Expected on the CPU path:
accepted with no library or host label (a launch is counted, so no "(no kernel of its own)" either).
On a GPU the kernel would not compile (a non-Triton call in a jit function).
"""
import numpy as np
import torch
import triton
import triton.language as tl

_STASH = {}


def _v(t):
    t = getattr(t, "value", t)
    h = getattr(t, "handle", None)
    if h is not None:
        t = h.data
    return int(np.asarray(t).reshape(-1)[0])


def _tile(z, pm, pn, bm, bn):
    x, w, b = (_STASH[k].numpy().astype(np.float64) for k in ("x", "w", "b"))
    pm, pn, bm, bn = _v(pm), _v(pn), _v(bm), _v(bn)
    r0, c0 = pm * bm, pn * bn
    v = x[r0:r0 + bm] @ w[:, c0:c0 + bn] + b[c0:c0 + bn]
    y = 0.5 * v * (1.0 + np.tanh(0.7978845608028654 * (v + 0.044715 * v ** 3)))
    z.handle.data[:y.shape[0], :y.shape[1]] = y.astype(np.float32)
    return z


@triton.jit
def mb_f1_kernel(Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    z = tl.zeros([BM, BN], dtype=tl.float32)
    z = _tile(z, pm, pn, BM, BN)
    tl.store(Y + rm[:, None] * N + rn[None, :], z, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, w, b):
        M, K = x.shape
        N = w.shape[1]
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if y.numel():
            _STASH.update(x=x, w=w, b=b)
            try:
                mb_f1_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](y, M, N, BM=16, BN=16)
            finally:
                _STASH.clear()
        return y
