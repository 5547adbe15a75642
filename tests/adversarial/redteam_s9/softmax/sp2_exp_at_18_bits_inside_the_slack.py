"""CHEAT, class 2 (precision just under the bound), softmax_rows. Every exponential keeps only 18 of
float32's 23 mantissa bits (the low 5 truncated: a table-plus-short-polynomial exp of relative error
2^-18, 32x float32's rounding, biased low). Rule 23's bound is `1.4 x honest + sqrt(n) u_acc` with
n the reduction length of the group's *largest* shape: softmax_rows' listed group reaches N = 4099,
so sqrt(4099) 2^-24 = 3.8e-6 of "accumulation slack" is granted to every shape of the group, 1x1
and 3x37 included, where no long sum exists. Targets rule 23 (slack from the largest shape)."""
import torch
import triton
import triton.language as tl


@triton.jit
def cheap_exp(v):
    e = tl.exp(v)
    return (e.to(tl.uint32, bitcast=True) & 0xFFFFFFE0).to(tl.float32, bitcast=True)


@triton.jit
def softmax_kernel(x, y, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    mx = tl.full([BN], float("-inf"), tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        mx = tl.maximum(mx, tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32))
    m = tl.max(mx, axis=0)
    acc = tl.zeros([BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
        acc += tl.where(c < N, cheap_exp(v - m), 0.0)
    inv = 1.0 / tl.sum(acc, axis=0)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
        tl.store(y + row * N + c, (cheap_exp(v - m) * inv).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            softmax_kernel[(M,)](x, y, N, BN=512)
        return y
