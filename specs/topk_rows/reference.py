"""Reference for topk_rows: the k largest values of each row, sorted descending,
``torch.topk(x, k, dim=1).values`` with k = min(TOP_K, N) and TOP_K = 64 (the top-k of
sampling over a vocabulary: k is fixed by the sampler, clipped to the row length).

KernelBench-style module: ``Model(*get_init_inputs(shape))`` is the reference, built per shape
(k depends on N); ``get_inputs(shape, dtype, device, generator)`` draws one trial's input x of
shape (M, N). The output has shape (M, k) and x's dtype. Values only: equal values are
interchangeable, so the answer does not depend on how ties are ordered.
"""

import torch

#: The k of the task (a constant of the reference): every row returns its min(TOP_K, N) largest values.
TOP_K = 64


class Model(torch.nn.Module):
    """y = torch.topk(x, k, dim=1, largest=True, sorted=True).values for x of shape (M, N)."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.topk(x, self.k, dim=1, largest=True, sorted=True).values


def get_init_inputs(shape=None):
    """[k] with k = min(TOP_K, N)."""
    return [min(TOP_K, (shape or {"N": TOP_K})["N"])]


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (M, N), standard normal (in bfloat16 a row of 32000 holds many equal
    values near its top: ties are part of the task)."""
    size = (shape["M"], shape["N"])
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)]
