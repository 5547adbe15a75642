"""Reference for causal_attention: the forward pass of causal scaled-dot-product attention,
``softmax(q k^T / sqrt(D) + causal mask) v``, as eager models call it:
``torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`` (on a GPU a fused
flash kernel: float32 scores and softmax; float64 here runs PyTorch's math path).

Not the materialised math in the input dtype: in bfloat16 its q @ k^T rounds the scores before the 1/sqrt(D) scale, and once the partial-staleness check scales a run of
q to |q| ~ 4 the scores near 40-130 lose 0.25-0.5 to rounding, moving the output by up to 6e-2,
outside the task's bfloat16 tolerance (eager itself fails it at 2x3x37 on a GPU). The
ladder's v0 (kernels/v0_eager.py) is that math with float32 scores.

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its (empty)
constructor arguments, ``get_inputs(shape, dtype, device, generator)`` draws one trial's q, k, v
of shape (B, H, S, HEAD_DIM), standard normal (shape is ``{"B": batch, "H": heads, "S": sequence
length}``; the head dimension is the task's constant HEAD_DIM = 128, as in Llama-class models).
The output has q's shape and dtype: ``o[b, h, i] = sum_{j <= i} p_ij v[b, h, j]``.
"""

import torch

#: The head dimension of the task (a constant of the reference, not a dim: every shape uses it).
HEAD_DIM = 128


class Model(torch.nn.Module):
    """o = softmax(q @ k^T / sqrt(D), masked to j <= i) @ v for q, k, v of shape (B, H, S, D)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """q, k, v of shape (B, H, S, HEAD_DIM), standard normal, in ``dtype``."""
    size = (shape["B"], shape["H"], shape["S"], HEAD_DIM)
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)
            for _ in range(3)]
