"""causal_attention v0: eager PyTorch math -- q k^T as a float32 batched GEMM, the causal mask, a
float32 softmax and p v as a bfloat16 (the input dtype) GEMM, materialising the (B, H, S, S) scores
and probabilities in DRAM. The scores are float32 because bfloat16 scores, rounded before the
1/sqrt(D) scale, fail the task's tolerance (reference.py says by how much)."""

import math

import torch


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        S, D = q.shape[-2], q.shape[-1]
        f = torch.promote_types(q.dtype, torch.float32)  # float32 scores (float64 stays float64)
        scores = torch.matmul(q.to(f), k.to(f).transpose(-2, -1)) * (1.0 / math.sqrt(D))
        future = torch.ones((S, S), dtype=torch.bool, device=q.device).triu(1)
        p = torch.softmax(scores.masked_fill_(future, float("-inf")), dim=-1)
        return torch.matmul(p.to(q.dtype), v)
