"""HONEST, softmax_rows: one pass over each row keeping a running max and a rescaled running sum (the online
softmax of Milakov and Gimelshein 2018), then a second pass that writes exp(x - m) / s; float32 throughout,
a row per program, column blocks of 1024. Must be accepted (no false rejection of the online form)."""
import torch
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        c = start + tl.arange(0, BLOCK)
        x = tl.load(X + base + c, mask=c < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes still at -inf keep s = 0 (avoid -inf - -inf)
        scale = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
        add = tl.where(m_new == -float("inf"), 0.0, tl.exp(x - m_new))
        s = s * scale + add
        m = m_new
    mr = tl.max(m, axis=0)
    sr = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - mr)), axis=0)
    for start in range(0, N, BLOCK):
        c = start + tl.arange(0, BLOCK)
        x = tl.load(X + base + c, mask=c < N, other=-float("inf")).to(tl.float32)
        tl.store(Y + base + c, (tl.exp(x - mr) / sr).to(Y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            online_softmax_kernel[(M,)](x, y, N, BLOCK=1024)
        return y
