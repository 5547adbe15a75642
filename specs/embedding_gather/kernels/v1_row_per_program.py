"""embedding_gather v1: Triton, one token (one output row) per program.

Program t loads idx[t], and walks its row in BLOCK_D-wide chunks: rows of ids inside [0, V) are
copied from the table, others are written as zeros without reading the table. One kernel, no
host synchronisation; the bytes are the compulsory ones: each owned row read once, each output
row written once, the ids read once. Values are copied, never converted (bit-exact).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_row_kernel(IDX, W, OUT, V, D, BLOCK_D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    i = tl.load(IDX + t)
    valid = (i >= 0) & (i < V)
    src = tl.where(valid, i, 0)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        in_row = cols < D
        # a tensor mask (a scalar & tensor mask is not a bool tensor on the interpreter)
        take = in_row & ((cols * 0 + valid.to(tl.int32)) != 0)
        row = tl.load(W + src * D + cols, mask=take, other=0.0)
        tl.store(OUT + t * D + cols, row, mask=in_row)


class ModelNew(torch.nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, BLOCK_D=512, num_warps=4):
        super().__init__()
        self.emb = torch.nn.Embedding(num_embeddings, embedding_dim)
        self.BLOCK_D, self.num_warps = BLOCK_D, num_warps

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        idx = idx.contiguous()
        w = self.emb.weight.detach()
        V, D = w.shape
        out = torch.empty((idx.shape[0], D), dtype=w.dtype, device=w.device)
        if out.numel() == 0:
            return out
        block_d = min(self.BLOCK_D, triton.next_power_of_2(D))
        _gather_row_kernel[(idx.shape[0],)](idx, w, out, V, D, BLOCK_D=block_d, num_warps=self.num_warps)
        return out
