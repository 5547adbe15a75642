"""flip2d v3: one pass over 64-bit words, column tiles fastest, streaming loads, mask-free interior.

v2 moves 32-bit words (one element per lane in float32/int32) and launches a 2D grid whose fast
axis walks down the rows, so the CTAs in flight at one moment read 4 KiB pieces 64 KiB apart.
v3 changes three things:

- 64-bit words: when a row is a whole number of 8-byte words (N * itemsize % 8 == 0, 8-byte
  aligned), it is a row of NW = N * itemsize / 8 words and the flip is a word flip plus a
  reversal inside each word: swap the 32-bit halves (4-byte dtypes) or reverse the four 16-bit
  lanes (2-byte dtypes), with shifts and masks. Every lane loads and stores 8 bytes: half of v2's
  memory instructions in float32/int32, a quarter of v1's in bfloat16/float16. Rows of 2-byte
  elements that are only a whole number of 4-byte words use v2's 32-bit word path; anything
  else (odd N, 8-byte dtypes) the element path. All three are bit moves: bit-exact for any value.
- A 1D grid with the column tile fastest: consecutive CTAs read consecutive mirrored pieces of
  one row and write consecutive pieces of the output, so the traffic in flight is spread over
  the address space as a plain copy's is.
- Loads carry eviction_policy="evict_first" (every byte is read once), and when the tile
  divides the tensor (EVEN, decided on the host) the loads and stores carry no mask at all.

Same bytes as v1/v2 (2 * M * N * itemsize); the spec's rationale states what it is expected to gain.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _flip_words_kernel(X, Y, M, NW, NB, LANES: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       EVEN: tl.constexpr):
    # X, Y: views of the input / output as words (int64 for LANES 2 and 4, int32 for LANES 1);
    # NW words per row, NB column tiles per row tile. LANES: what reversing one word means.
    pid = tl.program_id(0)
    pm = pid // NB
    pn = pid - pm * NB
    rows = (pm * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    cols = pn * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < M) & (cols < NW)
    src = X + rows * NW + (NW - 1 - cols)
    if EVEN:
        w = tl.load(src, eviction_policy="evict_first")
    else:
        w = tl.load(src, mask=mask, other=0, eviction_policy="evict_first")
    if LANES == 2:  # int64 word = two 4-byte elements: swap them
        w = (w << 32) | ((w >> 32) & 0xFFFFFFFF)
    elif LANES == 4:  # int64 word = four 2-byte elements: reverse them
        w = (w << 48) | ((w << 16) & 0xFFFF00000000) | ((w >> 16) & 0xFFFF0000) | ((w >> 48) & 0xFFFF)
    else:  # int32 word = two 2-byte elements: swap them
        w = (w << 16) | ((w >> 16) & 0xFFFF)
    if EVEN:
        tl.store(Y + rows * NW + cols, w)
    else:
        tl.store(Y + rows * NW + cols, w, mask=mask)


@triton.jit
def _flip_elements_kernel(X, Y, M, N, NB, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    pm = pid // NB
    pn = pid - pm * NB
    rows = (pm * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)[:, None]
    cols = pn * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    mask = (rows < M) & (cols < N)
    vals = tl.load(X + rows * N + (N - 1 - cols), mask=mask, eviction_policy="evict_first")
    tl.store(Y + rows * N + cols, vals, mask=mask)


def word_path(x: torch.Tensor):
    """(word dtype, LANES) for x's rows, or None for the element path."""
    es, n = x.element_size(), x.shape[1]
    if es in (2, 4) and (n * es) % 8 == 0 and x.data_ptr() % 8 == 0:
        return torch.int64, 8 // es
    if es == 2 and n % 2 == 0 and x.data_ptr() % 4 == 0:
        return torch.int32, 1
    return None


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_M=1, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.num_warps = BLOCK_M, BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        BM, BN = self.BLOCK_M, self.BLOCK_N
        path = word_path(x)
        if path is not None:
            wdtype, lanes = path
            nw = N * x.element_size() // (8 if wdtype is torch.int64 else 4)
            nb, mb = triton.cdiv(nw, BN), triton.cdiv(M, BM)
            even = nw % BN == 0 and M % BM == 0
            _flip_words_kernel[(nb * mb,)](x.view(wdtype), y.view(wdtype), M, nw, nb, LANES=lanes, BLOCK_M=BM,
                                           BLOCK_N=BN, EVEN=even, num_warps=self.num_warps)
        else:
            nb, mb = triton.cdiv(N, BN), triton.cdiv(M, BM)
            _flip_elements_kernel[(nb * mb,)](x, y, M, N, nb, BLOCK_M=BM, BLOCK_N=BN, num_warps=self.num_warps)
        return y
