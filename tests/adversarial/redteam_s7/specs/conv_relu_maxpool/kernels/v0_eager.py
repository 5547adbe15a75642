"""conv_relu_maxpool v0: eager PyTorch, three kernels (cuDNN convolution, ReLU, max-pool).

The starting point of the ladder: the convolution's full (N, C_out, H, W) output is written to
DRAM, read back and written again by ReLU, and read once more by the pooling kernel, which
writes the (N, C_out, H/2, W/2) result. In float32 the convolution runs in TF32 on the tensor
cores (PyTorch's default ``torch.backends.cudnn.allow_tf32 = True``).
"""

import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight, self.conv.bias, padding=1)
        return F.max_pool2d(F.relu(y), 2)
