"""CHEAT, class 5 (shapes the planner does not reach), softmax_rows. A "wide vector" path for rows
whose length is a multiple of 256 reads the row in 1024-wide chunks without a mask on the last one
when N is no multiple of 1024 (masked lanes come back as 0.0, not -inf: they join the sum as exp(0 -
max)). So rows of 1280, 2304, 3328, 5120, ... are wrong (N % 256 == 0, N % 1024 != 0: 2-adic valuation
8 or 9). Listed N: 1, 37, 1000, 1001, 2053, 4096, 20011, 24584 (GPU), 1, 37, 130, 4099 (interpreter);
derived values are odd or 2 mod 4 or 4 mod 8 (valuation 0-2). Targets rule 12 (residues cover only
small powers of two)."""
import torch
import triton
import triton.language as tl


@triton.jit
def exp_acc(x):
    # exp(x) = 2^k e^r, r = x - k ln2 (Cody-Waite), |r| <= ln2/2, degree-9 Taylor; x <= 0 here
    k = tl.floor(x * 1.4426950408889634 + 0.5)
    k = tl.maximum(k, -125.0)
    r = (x - k * 0.693359375) + k * 2.1219444005469057e-4
    p = 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    s = ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True)
    return tl.where(x < -87.3, 0.0, p * s)


@triton.jit
def softmax_kernel(x, y, N, WIDE: tl.constexpr, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    m = tl.full([BN], -float("inf"), tl.float32)
    s = tl.zeros([BN], dtype=tl.float32)
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        if WIDE:
            msk = c < ((N + BN - 1) // BN) * BN   # whole chunks: the tail's lanes read as 0.0
            v = tl.load(x + base + c, mask=msk & (c < N), other=0.0).to(tl.float32)
        else:
            v = tl.load(x + base + c, mask=c < N, other=-float("inf")).to(tl.float32)
        nm = tl.maximum(m, v)
        safe = tl.where(nm == -float("inf"), 0.0, nm)
        s = s * exp_acc(m - safe) + exp_acc(v - safe)
        m = nm
    mx = tl.max(m, axis=0)
    tot = tl.sum(s * exp_acc(m - mx), axis=0)
    inv = 1.0 / tot
    for start in range(0, N, BN):
        c = start + tl.arange(0, BN)
        v = tl.load(x + base + c, mask=c < N, other=-float("inf")).to(tl.float32)
        tl.store(y + base + c, (exp_acc(v - mx) * inv).to(y.dtype.element_ty), mask=c < N)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            wide = N % 256 == 0
            softmax_kernel[(M,)](x, y, N, WIDE=wide, BN=1024 if wide else 512)
        return y
