"""HONEST, softmax_rows, split-row style: kernel 1 gives every (row, chunk of 256) its partial
(max, sum of exp(x - chunk max)) in a float32 workspace; kernel 2, one program per (row, chunk),
combines the row's partials (sum_j s_j exp(m_j - M)) and writes its chunk. Two launches, no loop over
the whole row in one program (the style of split-K GEMMs, unlike the ladder's row programs).
(Its first version was rightly rejected by the `{mask: -inf}` probe: a chunk masked whole gave
exp(-inf - -inf) = NaN in its partial sum; the guard below is the fix.)"""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x, pm, ps, N, C, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1)
    c = j * BN + tl.arange(0, BN)
    v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
    m = tl.max(v, axis=0)
    s = tl.sum(tl.where(c < N, tl.exp(v - m), 0.0), axis=0)
    s = tl.where(m == float("-inf"), 0.0, s)  # a chunk masked whole (-inf): no mass, not NaN
    tl.store(pm + row * C + j, m)
    tl.store(ps + row * C + j, s)


@triton.jit
def finish_kernel(x, y, pm, ps, N, C, BN: tl.constexpr, BC: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1)
    k = tl.arange(0, BC)
    mm = tl.full([BC], float("-inf"), tl.float32)
    for s in range(0, C, BC):
        mm = tl.maximum(mm, tl.load(pm + row * C + s + k, mask=s + k < C, other=float("-inf")))
    M = tl.max(mm, axis=0)
    tot = tl.zeros([BC], tl.float32)
    for s in range(0, C, BC):
        a = tl.load(pm + row * C + s + k, mask=s + k < C, other=float("-inf"))
        b = tl.load(ps + row * C + s + k, mask=s + k < C, other=0.0)
        tot += tl.where(s + k < C, b * tl.exp(a - M), 0.0)
    inv = 1.0 / tl.sum(tot, axis=0)
    c = j * BN + tl.arange(0, BN)
    v = tl.load(x + row * N + c, mask=c < N, other=float("-inf")).to(tl.float32)
    tl.store(y + row * N + c, (tl.exp(v - M) * inv).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        BN = 256
        C = triton.cdiv(N, BN)
        pm = torch.empty((M, C), dtype=torch.float32, device=x.device)
        ps = torch.empty((M, C), dtype=torch.float32, device=x.device)
        partial_kernel[(M, C)](x, pm, ps, N, C, BN=BN)
        finish_kernel[(M, C)](x, y, pm, ps, N, C, BN=BN, BC=64)
        return y
