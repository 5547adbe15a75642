"""Reference for embedding_gather: the embedding lookup of one vocabulary shard.

In tensor-parallel models (Megatron-LM's VocabParallelEmbedding, vLLM's VocabParallelEmbedding)
each GPU holds V rows of the embedding table and looks up a whole batch of token ids: ids it
owns give their row, ids outside [0, V) give a zero row (another shard supplies it, and an
all-reduce sums the shards). So every int64 id has a defined answer -- including the extreme
values the harness plants in integer inputs.

``Model(V, D)`` holds ``emb``, an ``nn.Embedding(V, D)`` (weights standard normal, PyTorch's
default); ``get_inputs(shape, dtype, device, generator)`` draws T int64 ids uniformly from
[-(V // 8) - 1, V + V // 8], so about a fifth of them fall outside the shard. The ids keep
their integer dtype whatever the dtype under test (which is the table's).
"""

import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    """out[t] = emb.weight[idx[t]] if 0 <= idx[t] < V else 0, for idx of shape (T,): out is (T, D)."""

    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        self.emb = torch.nn.Embedding(num_embeddings, embedding_dim)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        valid = (idx >= 0) & (idx < self.emb.num_embeddings)
        rows = F.embedding(torch.where(valid, idx, torch.zeros_like(idx)), self.emb.weight)
        return rows.masked_fill(~valid[:, None], 0.0)


# The table's size is part of the module, so each shape fixes it through the dims V and D.
def get_init_inputs(shape=None):
    shape = shape or {"V": 32000, "D": 4096}
    return [shape["V"], shape["D"]]


def get_inputs(shape, dtype, device, generator):
    """idx of shape (T,), int64, uniform in [-(V // 8) - 1, V + V // 8] (``dtype`` is the table's)."""
    V = shape["V"]
    idx = torch.randint(-(V // 8) - 1, V + V // 8 + 1, (shape["T"],), dtype=torch.int64, device=device,
                        generator=generator)
    return [idx]
