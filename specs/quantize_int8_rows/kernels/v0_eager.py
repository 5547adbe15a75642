"""quantize_int8_rows v0: eager PyTorch, the recipe as tensor operations.

Upcast, mask the non-finite values, |x|, the row max, the floor, the scale, the division, the
rounding, the clamp and the cast: about ten kernels. x's float32 copy and several (M, N) float32
temporaries cross DRAM (roughly 8 bytes per element per kernel), and the row reduction is a
separate pass over the data.
"""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = torch.where(xf.abs() <= torch.finfo(torch.float32).max, xf, 0.0)
        absmax = xf.abs().amax(dim=1, keepdim=True).clamp(min=1e-5)
        scale = absmax / torch.full_like(absmax, 127.0)
        return torch.round(xf / scale).clamp(-127, 127).to(torch.int8)
