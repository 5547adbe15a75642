"""HONEST, flip2d, reversal in registers (unlike the ladder's mirrored-address loads): each program
loads a contiguous, ascending block of source columns -- the mirror image of its output block --
and reverses it in registers with ``tl.flip`` (a bitcast to integers and XOR butterflies: the
bits move unchanged, so NaN payloads and -0.0 survive), then stores it ascending. Both the load and
the store are unit-stride; ragged edges are masked (a source block that starts before column 0
loads masked lanes that land beyond column N - 1 after the reversal, where the store is masked)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_tiles_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = (tl.program_id(0) * BM + tl.arange(0, BM)).to(tl.int64)
    j0 = tl.program_id(1).to(tl.int64) * BN
    lane = tl.arange(0, BN).to(tl.int64)
    src = N - j0 - BN + lane                        # ascending source columns of the mirror block
    rm = (rows < M)[:, None]
    v = tl.load(X + rows[:, None] * N + src[None, :], mask=rm & ((src >= 0) & (src < N))[None, :])
    out = tl.flip(v, 1)
    cols = j0 + lane
    tl.store(Y + rows[:, None] * N + cols[None, :], out, mask=rm & (cols < N)[None, :])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        BM, BN = 4, 512
        flip_tiles_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, y, M, N, BM=BM, BN=BN)
        return y
