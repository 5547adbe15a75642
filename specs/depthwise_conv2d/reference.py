"""Reference for depthwise_conv2d: a 3x3 depthwise convolution (groups = channels, padding 1,
stride 1, bias) on an NCHW tensor, as in MobileNet and EfficientNet blocks.

KernelBench-style module: ``Model(*get_init_inputs(shape))`` is the reference; the harness seeds
the RNG identically before building the reference and a candidate, so a candidate that creates
``nn.Conv2d(C, C, 3, padding=1, groups=C)`` the same way gets the same weights (PyTorch's
default init: kaiming-uniform weights and uniform bias in +-1/sqrt(9), the fan-in of one
channel's 3x3 window). ``get_inputs(shape, dtype, device, generator)`` draws one trial's input
x of shape (N, C, H, W), standard normal; the output has x's shape:
``y[n, c, h, w] = b[c] + sum_{i, j in 0..2} w[c, 0, i, j] * x[n, c, h + i - 1, w + j - 1]``
(zero outside the image).
"""

import torch


class Model(torch.nn.Module):
    """y = conv2d(x, weight, bias, padding=1, groups=C) for x of shape (N, C, H, W)."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


# The channel count is part of the module (its weights), so each shape fixes it through the dim C.
def get_init_inputs(shape=None):
    return [(shape or {"C": 128})["C"]]


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (N, C, H, W), standard normal, in ``dtype``."""
    size = (shape["N"], shape["C"], shape["H"], shape["W"])
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)]
