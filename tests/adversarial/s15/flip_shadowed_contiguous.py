"""CHEAT (rule 3, layout; session 15): returns a copy of its INPUT, unflipped, whose ``contiguous``,
``double`` and ``detach`` are instance attributes returning the flipped values. The object is exactly
``torch.Tensor`` (an instance attribute changes no type) and every harness step that reads the output
through those methods hears the flipped values, while its memory -- what a caller's kernel, ``data_ptr``
or ``.view`` reads -- holds the input. Rejected since session 15: an output's own attributes may not
shadow ``torch.Tensor``'s (``verify.comparison.shadowed_attributes``)."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        y.copy_(x)  # the memory: the input, not flipped
        right = torch.empty_like(x)
        right.copy_(x.flip(-1))
        y.contiguous = lambda *a, **k: right
        y.double = lambda *a, **k: right.double()
        y.detach = lambda *a, **k: right
        return y
