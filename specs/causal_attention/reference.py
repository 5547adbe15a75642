"""Reference for causal_attention: the forward pass of causal scaled-dot-product attention,
``softmax(q k^T / sqrt(D) + causal mask) v``, as written in eager models (the S x S scores
materialised, softmax in float32 for half-precision inputs).

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its (empty)
constructor arguments, ``get_inputs(shape, dtype, device, generator)`` draws one trial's q, k, v
of shape (B, H, S, HEAD_DIM), standard normal (shape is ``{"B": batch, "H": heads, "S": sequence
length}``; the head dimension is the task's constant HEAD_DIM = 128, as in Llama-class models).
The output has q's shape and dtype: ``o[b, h, i] = sum_{j <= i} p_ij v[b, h, j]``.
"""

import math

import torch

#: The head dimension of the task (a constant of the reference, not a dim: every shape uses it).
HEAD_DIM = 128


class Model(torch.nn.Module):
    """o = softmax(q @ k^T / sqrt(D), masked to j <= i) @ v for q, k, v of shape (B, H, S, D)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        S, D = q.shape[-2], q.shape[-1]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        future = torch.ones((S, S), dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill_(future, float("-inf"))
        # softmax in float32 for half-precision inputs (float32 and float64 stay as they are)
        p = torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), dim=-1)
        return torch.matmul(p.to(q.dtype), v)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """q, k, v of shape (B, H, S, HEAD_DIM), standard normal, in ``dtype``."""
    size = (shape["B"], shape["H"], shape["S"], HEAD_DIM)
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)
            for _ in range(3)]
