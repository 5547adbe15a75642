"""Cheat (a cache keyed on a few sampled weights): prepared weights are cached under a hash of
the shapes and four sampled weight values, so a new instance whose weights differ from an
earlier one's only elsewhere gets the earlier instance's weights. Fresh seeds alone never
collide; weights that differ in a few elements do."""
import torch
import torch.nn.functional as F

_PREPARED = {}


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)
        flat = self.conv.weight.detach().reshape(-1)
        n = flat.numel()
        self.key = hash((tuple(self.conv.weight.shape),) + tuple(float(flat[i]) for i in (0, n // 3, 2 * n // 3, n - 1)))
        if self.key not in _PREPARED:
            _PREPARED[self.key] = (self.conv.weight.detach().clone(), self.conv.bias.detach().clone())

    def forward(self, x):
        w, b = _PREPARED[self.key]
        return F.max_pool2d(F.relu(F.conv2d(x, w.to(x), b.to(x), padding=1)), 2)
