"""embedding_gather v2: Triton, BLOCK_T tokens per program, 2D tiles of BLOCK_T x BLOCK_D.

A program loads BLOCK_T ids at once and moves a BLOCK_T x BLOCK_D tile per loop step: with
BLOCK_T = 8 and BLOCK_D = 512 that is 4096 elements (8 KiB in bfloat16: 16 elements, two
16-byte accesses, per thread with 8 warps) in flight per step instead of v1's single row chunk, and a grid T / 8
programs long, so fewer, fatter programs keep more bytes outstanding per SM. Output stores are
marked evict-first (written once, never re-read here); table rows keep the default policy, so
rows of frequent tokens can hit in L2. Same compulsory bytes as v1; bit-exact copies.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_tile_kernel(IDX, W, OUT, T, V, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    toks = tl.program_id(0).to(tl.int64) * BLOCK_T + tl.arange(0, BLOCK_T)
    in_t = toks < T
    ids = tl.load(IDX + toks, mask=in_t, other=-1)
    valid = (ids >= 0) & (ids < V)
    src = tl.where(valid, ids, 0)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        in_row = cols[None, :] < D
        rows = tl.load(W + src[:, None] * D + cols[None, :], mask=valid[:, None] & in_row, other=0.0)
        tl.store(OUT + toks[:, None] * D + cols[None, :], rows, mask=in_t[:, None] & in_row,
                 eviction_policy="evict_first")


class ModelNew(torch.nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, BLOCK_T=8, BLOCK_D=512, num_warps=8):
        super().__init__()
        self.emb = torch.nn.Embedding(num_embeddings, embedding_dim)
        self.BLOCK_T, self.BLOCK_D, self.num_warps = BLOCK_T, BLOCK_D, num_warps

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        idx = idx.contiguous()
        w = self.emb.weight.detach()
        V, D = w.shape
        T = idx.shape[0]
        out = torch.empty((T, D), dtype=w.dtype, device=w.device)
        if out.numel() == 0:
            return out
        block_d = min(self.BLOCK_D, triton.next_power_of_2(D))
        _gather_tile_kernel[(triton.cdiv(T, self.BLOCK_T),)](idx, w, out, T, V, D, BLOCK_T=self.BLOCK_T,
                                                             BLOCK_D=block_d, num_warps=self.num_warps)
        return out
