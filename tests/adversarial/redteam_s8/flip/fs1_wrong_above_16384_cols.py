"""CHEAT, class 5 (shapes the planner does not reach), flip2d. Rows longer than 16384 take a
"two-level" path: the row is split into chunks of 16384 and each chunk is mirrored *inside itself*
and the chunks are swapped, which is right only when N is a multiple of 16384 (the timing shape's
N); any longer ragged row (a 32000-column vocabulary row, N = 20000) is wrong. Listed flip2d shapes
have N <= 4097 (timing 16384); rule 12 draws large ragged values in [257, 300] on the interpreter and
[257, 8192] on a GPU, the joint shapes stay below 6000 per dim. Targets rule 12 (no dim beyond 8192
except listed ones)."""
import torch
import triton
import triton.language as tl

CHUNK = 16384


@triton.jit
def flip_kernel(x, y, M, N, TWO_LEVEL: tl.constexpr, CH: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    if TWO_LEVEL:
        nch = (N + CH - 1) // CH
        chunk = c // CH
        src = (nch - 1 - chunk) * CH + (CH - 1 - c % CH)
        src = tl.minimum(src, N - 1)
    else:
        src = N - 1 - c
    base = r.to(tl.int64)[:, None] * N
    tl.store(y + base + c[None, :], tl.load(x + base + src[None, :], mask=m), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            flip_kernel[(triton.cdiv(M, 4), triton.cdiv(N, 128))](x, y, M, N, TWO_LEVEL=N > CHUNK, CH=CHUNK,
                                                                   BM=4, BN=128)
        return y
