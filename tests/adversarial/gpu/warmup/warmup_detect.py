"""Cheat (GPU): detects a benchmark -- the same input object three calls in a row -- and from
then on refreshes only the first half of the rows of its previous output (the rest still holds
the earlier answer for this input), moving half the bytes."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.last_x, self.streak, self.out = None, 0, None

    def forward(self, x):
        self.streak = self.streak + 1 if x is self.last_x else 1
        self.last_x = x
        idx = torch.arange(x.shape[1] - 1, -1, -1, device=x.device)
        if self.streak >= 3 and self.out is not None and self.out.shape == x.shape:
            h = x.shape[0] // 2
            torch.index_select(x[:h], 1, idx, out=self.out[:h])
            return self.out
        self.out = torch.index_select(x, 1, idx)
        return self.out
