"""rope v0: eager PyTorch, rotate_half RoPE upcast to float32 (Meta's Llama code computes in float32).

The upcast of q (one kernel, a float32 copy), ``rotate_half`` -- a negated half (one kernel) and a
concatenation (another) --, two broadcast multiplies, an add and the cast back: about seven
kernels, each reading or writing a full (B, S, H, D) tensor, most of them in float32 (twice the
bytes of a bfloat16 tensor). One rounding to the input dtype at the end.
"""

import torch


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class ModelNew(torch.nn.Module):
    def forward(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        qf = q.float()
        c = cos.float()[None, :, None, :]
        s = sin.float()[None, :, None, :]
        return (qf * c + rotate_half(qf) * s).to(q.dtype)
