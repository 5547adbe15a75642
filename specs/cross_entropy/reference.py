"""Reference for cross_entropy: mean cross-entropy of (M, V) logits against M class indices,
``F.cross_entropy(logits, target % V)`` (a language model's loss over its vocabulary).

KernelBench-style module: ``Model`` is the reference, ``get_init_inputs()`` gives its constructor
arguments (none), ``get_inputs(shape, dtype, device, generator)`` draws one trial's logits
(``{"M": rows, "V": vocabulary}``) and int64 targets in [0, V).

Targets are taken modulo V: the harness's staleness check (VERIFICATION.md rule 10) shifts integer
inputs by 1234567, and a class index must stay a class index; a kernel reduces the target the
same way. The result is a 0-dim tensor in the logits' dtype, as F.cross_entropy returns.
"""

import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    """mean_i (logsumexp_j logits[i, j] - logits[i, target[i] mod V])."""

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, torch.remainder(target, logits.shape[-1]))


def get_init_inputs():
    return []


def get_inputs(shape, dtype, device, generator):
    """logits (M, V): standard normal times 2 (a spread like a trained model's), in ``dtype``;
    target (M,): int64 uniform in [0, V)."""
    M, V = shape["M"], shape["V"]
    logits = (2.0 * torch.randn((M, V), dtype=torch.float32, device=device, generator=generator)).to(dtype)
    target = torch.randint(0, V, (M,), dtype=torch.int64, device=device, generator=generator)
    return [logits, target]
