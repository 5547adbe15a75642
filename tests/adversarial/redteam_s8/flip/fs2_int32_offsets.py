"""CHEAT, class 5 (shapes the planner does not reach), flip2d. Offsets are computed in int32
(``row * N + col`` with int32 program ids), the classic overflow: every element past 2^31 is read
and written at a wrapped (negative) offset. Wrong for any tensor of more than 2^31 elements (8 GiB in
float32, 4 GiB in bfloat16: a 16400 x 131072 logit matrix); the GPU budget of rule 12 is 2^30
elements (timing shape 2^29), the interpreter's 2^20. On the interpreter a negative offset would be
a host-memory fault, so no verify shape may reach it either. Targets rule 12 (element budget)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)  # int32
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    base = r[:, None] * N  # int32 product: wraps past 2^31
    tl.store(y + base + c[None, :], tl.load(x + base + (N - 1 - c)[None, :], mask=m), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            flip_kernel[(triton.cdiv(M, 4), triton.cdiv(N, 128))](x, y, M, N, BM=4, BN=128)
        return y
