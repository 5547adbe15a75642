"""Honest (conv): TF32 arithmetic as a tensor core does it, emulated in software -- both operands'
mantissas truncated to 10 bits (the hardware reads the top 19 bits of each float32), products
accumulated in float32, the result rounded once to the output dtype. The TF32 policy allows
exactly this; it must be accepted."""
import torch
import torch.nn.functional as F


def _tf32(t):
    x = t.float().contiguous()
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels, **kw):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        y = F.conv2d(_tf32(x), _tf32(self.conv.weight), self.conv.bias.float(), padding=1)
        return F.max_pool2d(torch.relu(y), 2).to(x.dtype)
