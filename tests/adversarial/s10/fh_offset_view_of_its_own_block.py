"""HONEST, flip2d (rule 10): the output is a contiguous view, at an offset of 64 elements, of a
larger block the call allocates with ``torch.empty`` (a workspace header in front, as a kernel with
a small scratch area might keep), written by one Triton kernel. The block is not kept, so the output
lies in memory the call allocated and its memory is released with the output: accepted."""
import torch
import triton
import triton.language as tl

HEAD = 64


@triton.jit
def flip_kernel(x, y, M, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = c < N
    v = tl.load(x + row * N + (N - 1 - c), mask=m)
    tl.store(y + row * N + c, v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        block = torch.empty(HEAD + M * N, dtype=x.dtype, device=x.device)
        y = block[HEAD:].view(M, N)
        if M * N:
            flip_kernel[(M, triton.cdiv(N, 128))](x, y, M, N, BN=128)
        return y
