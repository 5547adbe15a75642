"""Red team s35 E: flip2d v5 with one fault on its whole-chunk path (MODE 1, NW % V == 0 and the
tiles not dividing the tensor): rows 32 and up are stored to row % 32. Every interpreter shape
before 37 x 8 ran that path with at most 32 rows, so the CPU plan accepted it."""
import torch
import triton
import triton.language as tl


@triton.jit
def _reverse_chunks(t, BLOCK_M: tl.constexpr, R: tl.constexpr, V: tl.constexpr, LOGV: tl.constexpr):
    # t: (BLOCK_M, R, V) integers (floats would round) -> each chunk's V words in reverse order. As in
    # tl.flip, the chunk axis is split into LOGV axes of 2 and every pair (a, b) becomes (b, a), here as
    # (a + b) - a (two's complement: exact for any bits; tl.flip's xor-sums run a hundred times slower on
    # the Triton interpreter). In the PTX it is register renaming only (no arithmetic on the data).
    y = tl.reshape(t, [BLOCK_M, R] + [2] * LOGV)
    for i in tl.static_range(LOGV):
        y = (tl.sum(y, 2 + i, keep_dims=True) - y).to(t.dtype)
    return tl.reshape(y, [BLOCK_M, R, V])


@triton.jit
def _flip_chunks_kernel(X, Y, M, NW, NB, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, V: tl.constexpr,
                        LOGV: tl.constexpr, SWAP: tl.constexpr, MODE: tl.constexpr, WIDE: tl.constexpr,
                        EVICT: tl.constexpr):
    # X, Y: (M, NW) rows of words; programs are tiles of BLOCK_M rows x BLOCK_N words, NB per row tile.
    # MODE 0: the tiles divide the tensor (no mask); 1: NW % V == 0 (whole chunks: a mask per chunk);
    # 2: any NW (a mask per word). Output word c = V*j + kk is source word NW - 1 - c.
    pid = tl.program_id(0)
    pm = pid // NB
    pn = pid - pm * NB
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)[:, None, None]
    j = pn * (BLOCK_N // V) + tl.arange(0, BLOCK_N // V)[None, :, None]  # output chunks of this tile
    k = tl.arange(0, V)[None, None, :]
    if WIDE:
        base = rows.to(tl.int64) * NW
    else:
        base = rows * NW
    s = NW - V - V * j + k  # source words of chunk j, ascending in k
    c = V * j + k
    if MODE == 0:
        t = tl.load(X + base + s, eviction_policy=EVICT)
    elif MODE == 1:
        t = tl.load(X + base + s, mask=(V * j < NW) & (rows < M), eviction_policy=EVICT)
    else:
        t = tl.load(X + base + s, mask=(s >= 0) & (rows < M), eviction_policy=EVICT)
    t = _reverse_chunks(t, BLOCK_M, BLOCK_N // V, V, LOGV)  # word V*j + kk <- s[V-1-kk] = NW-1-(V*j + kk)
    if SWAP:  # uint32 word = two 2-byte elements: swap them
        t = (t << 16) | (t >> 16)
    if MODE == 0:
        tl.store(Y + base + c, t)
    elif MODE == 1:  # THE FAULT (red team s35 E): rows past the first 32 land on row % 32
        tl.store(Y + (rows % 32) * NW + c, t, mask=(c < NW) & (rows < M))
    else:
        tl.store(Y + base + c, t, mask=(c < NW) & (rows < M))


#: integer views of each element size (bit moves need no float arithmetic)
_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class ModelNew(torch.nn.Module):
    """forward: x (M, N), any dtype of 1, 2, 4 or 8 bytes -> torch.flip(x, dims=[1]), same dtype,
    bit-exact. Tiles of ``BLOCK_M`` rows x ``BLOCK_N`` words (powers of two; 1 row in the ladder);
    ``EVICT`` is the loads' eviction policy ("" for none)."""

    def __init__(self, BLOCK_M=1, BLOCK_N=1024, num_warps=4, EVICT="evict_last"):
        super().__init__()
        self.BLOCK_M, self.BLOCK_N, self.num_warps, self.EVICT = BLOCK_M, BLOCK_N, num_warps, EVICT

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        size = x.element_size()
        swap = size == 2 and N % 2 == 0 and x.data_ptr() % 4 == 0
        if swap:
            xv, yv, nw, word = x.view(torch.uint32), y.view(torch.uint32), N // 2, 4
        else:
            xv, yv, nw, word = x.view(_INT_OF_SIZE[size]), y.view(_INT_OF_SIZE[size]), N, size
        V = 16 // word
        BM, BN = self.BLOCK_M, max(self.BLOCK_N, V)
        nb, mb = triton.cdiv(nw, BN), triton.cdiv(M, BM)
        mode = 0 if nw % BN == 0 and M % BM == 0 else (1 if nw % V == 0 else 2)
        _flip_chunks_kernel[(nb * mb,)](xv, yv, M, nw, nb, BLOCK_M=BM, BLOCK_N=BN, V=V,
                                        LOGV=V.bit_length() - 1, SWAP=swap, MODE=mode,
                                        WIDE=(mb * BM + 1) * nw >= 2**31, EVICT=self.EVICT,
                                        num_warps=self.num_warps)
        return y
