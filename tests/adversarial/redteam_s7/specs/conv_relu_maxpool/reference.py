"""Reference for conv_relu_maxpool: Conv2d(3x3, padding 1, bias) -> ReLU -> MaxPool2d(2).

KernelBench-style module: ``Model(*get_init_inputs())`` is the reference; the harness seeds the
RNG identically before building the reference and a candidate, so a candidate that creates
``nn.Conv2d(C_in, C_out, 3, padding=1)`` in the same way gets the same weights (PyTorch's default
init: kaiming-uniform weights and uniform bias in +-1/sqrt(C_in * 9)).
``get_inputs(shape, dtype, device, generator)`` draws one trial's input
``x`` of shape (N, C_in, H, W), standard normal; the output has shape (N, C_out, H // 2, W // 2)
(floor pooling: an odd last row/column is dropped).
"""

import torch


class Model(torch.nn.Module):
    """y = max_pool2d(relu(conv2d(x, weight, bias, padding=1)), 2) for x of shape (N, C_in, H, W)."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)


# The channel counts are part of the module (its weights), so each shape fixes them through the
# spec's dims C_in and C_out; get_init_inputs receives the shape when the harness passes it.
def get_init_inputs(shape=None):
    shape = shape or {"C_in": 64, "C_out": 128}
    return [shape["C_in"], shape["C_out"]]


def get_inputs(shape, dtype, device, generator):
    """One input x of shape (N, C_in, H, W), standard normal, in ``dtype``."""
    size = (shape["N"], shape["C_in"], shape["H"], shape["W"])
    return [torch.randn(size, dtype=torch.float32, device=device, generator=generator).to(dtype)]
