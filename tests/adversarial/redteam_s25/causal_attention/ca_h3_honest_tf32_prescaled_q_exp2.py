"""HONEST (TF32 emulation, FlashAttention/Triton-tutorial style): the softmax scale and log2(e) folded
into q BEFORE the TF32 product (q' = q * sm_scale * log2 e, then q' and k rounded to TF32), exp2 softmax
with a running max, probabilities rounded to TF32 before p v, float32 accumulation. v kept in float32
(as ca_h2, for rule 23's tiny-shape artifact). Within the float32 policy "TF32 tensor-core products"."""
import math

import torch


def _tf32(x: torch.Tensor) -> torch.Tensor:
    m, e = torch.frexp(x)
    return torch.ldexp(torch.round(m * 2048.0) / 2048.0, e)


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        S, D = q.shape[-2], q.shape[-1]
        qs = q.float() * (1.0 / math.sqrt(D) * 1.4426950408889634)
        s = _tf32(qs) @ _tf32(k.float()).transpose(-1, -2)  # scores in base-2 units
        causal = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~causal, float("-inf"))
        p = torch.exp2(s - s.amax(-1, keepdim=True))
        o = _tf32(p) @ v.float()
        return (o / p.sum(-1, keepdim=True)).to(q.dtype)
