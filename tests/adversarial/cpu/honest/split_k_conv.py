"""Honest (conv): split-K in float32 -- the input channels split into groups of 5, each group's
partial convolution computed separately, the partial sums added in reverse order, then bias,
ReLU and pooling; one rounding to the output dtype. Another summation order than the reference's."""
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels, **kw):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        w, xf = self.conv.weight.float(), x.float()
        parts = [F.conv2d(xf[:, c0:c0 + 5], w[:, c0:c0 + 5], None, padding=1) for c0 in range(0, x.shape[1], 5)]
        acc = parts[-1]
        for p in reversed(parts[:-1]):
            acc = acc + p
        y = F.max_pool2d(torch.relu(acc + self.conv.bias.float()[None, :, None, None]), 2)
        return y.to(x.dtype)
