"""Reference for rope: rotary position embedding (RoPE) applied to queries, as in Llama.

Hugging Face's ``apply_rotary_pos_emb`` with ``rotate_half``: for q of shape (B, S, H, D) (the
flash-attention layout: batch, sequence, heads, head dim) and cos/sin tables of shape (S, D),

    out = q * cos + rotate_half(q) * sin,   rotate_half(q) = cat(-q[..., D/2:], q[..., :D/2])

with cos/sin broadcast over the batch and the heads. Computed in float32 and rounded once to the
input dtype, as Meta's reference Llama code does (``xq.float()`` ... ``.type_as(xq)``); Hugging
Face's bfloat16 path rounds each product first, which loses up to 2^-8 of |q| where the sum
cancels.

``get_inputs(shape, dtype, device, generator)`` draws q standard normal and builds the tables the
way Llama does: positions p = p0 + (0..S-1) with p0 drawn in [0, 4096), inverse frequencies
10000^(-2i/D), angles p * f_i repeated for both halves (``emb = cat(freqs, freqs)``), cos and sin
computed in float32 and cast to ``dtype``. Kernels must read both halves of the tables (the
harness changes table entries in place in its staleness checks).
"""

import torch


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(torch.nn.Module):
    """out = q * cos + rotate_half(q) * sin for q (B, S, H, D), cos and sin (S, D), in float32."""

    def forward(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        acc = torch.promote_types(q.dtype, torch.float32)  # float32, or float64 for the float64 reference
        qf = q.to(acc)
        c = cos.to(acc)[None, :, None, :]
        s = sin.to(acc)[None, :, None, :]
        return (qf * c + rotate_half(qf) * s).to(q.dtype)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """q (B, S, H, D) standard normal; cos, sin (S, D) of Llama's rotary angles, in ``dtype``."""
    B, S, H, D = shape["B"], shape["S"], shape["H"], shape["D"]
    q = torch.randn((B, S, H, D), dtype=torch.float32, device=device, generator=generator).to(dtype)
    p0 = int(torch.randint(0, 4096, (1,), device=device, generator=generator).item())
    pos = torch.arange(p0, p0 + S, dtype=torch.float32, device=device)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float32, device=device) / D))
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return [q, emb.cos().to(dtype), emb.sin().to(dtype)]
