"""HONEST (session 25, for the float32 widening probe): causal attention computed as a TF32
tensor-core kernel rounds its scores, in float32 -- q and k rounded to TF32 (11 significant bits,
nearest) before q k^T, the probabilities rounded to TF32 before p v, float32 accumulation and a
max-subtracted float32 softmax. v is kept in float32: on the interpreter's listed shapes (one of them
has one token per head, o = v) a v rounded to 11 bits makes 3.6 % of the outputs float16-representable,
which rule 23's lower-format check rejects, an artifact of those tiny shapes (the GPU's listed shapes
are longer) and not what the probe is about. Torch operators only (a run labels it a library call); it
stands in on the CPU for an honest TF32 flash kernel's scores, which the interpreter's tl.dot computes
in exact float32."""

import math

import torch


def _tf32(x: torch.Tensor) -> torch.Tensor:
    m, e = torch.frexp(x)
    return torch.ldexp(torch.round(m * 2048.0) / 2048.0, e)


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        S, D = q.shape[-2], q.shape[-1]
        s = _tf32(q.float()) @ _tf32(k.float()).transpose(-1, -2) * (1.0 / math.sqrt(D))
        causal = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~causal, float("-inf"))
        p = torch.exp(s - s.amax(-1, keepdim=True))
        o = _tf32(p) @ v.float()
        return (o / p.sum(-1, keepdim=True)).to(q.dtype)
