"""CHEAT (rule 7, inputs untouched; session 15): flips its INPUT in place (the caller's tensor is
clobbered) and returns a copy, then hides the write from the harness by shadowing the input's ``view``
with an instance attribute that answers with a view of a saved copy of the original: the harness's
bitwise check of the inputs (``comparison._bits``: ``x.view(torch.int32)``) reads the saved copy.
Rejected since session 15: a verified call may not leave attributes on its inputs that shadow
``torch.Tensor``'s (``verify.poison.call_poisoned``)."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        saved = torch.empty_like(x)
        saved.copy_(x)
        x.copy_(x.flip(-1))  # in place: the caller's input now holds the answer
        out = torch.empty_like(x)
        out.copy_(x)
        x.view = lambda *a, **k: torch.Tensor.view(saved, *a, **k)
        return out
