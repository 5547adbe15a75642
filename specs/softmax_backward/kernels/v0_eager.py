"""softmax_backward v0: eager PyTorch, the reference's own operators.

Four kernels: dy * y (reads two (M, N) tensors, writes one), its row sum (reads it), dy - sum
(reads two, writes one), y * that (reads two, writes one): seven (M, N) reads and three writes,
against the two reads and one write the gradient needs, and every intermediate rounded to the
element type. The starting point of the ladder.
"""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        # in float32 (float64 stays float64), one rounding to the input dtype at the end: eager
        # PyTorch on bfloat16 tensors rounds dy * y, the row sum and dy - sum, and the rounded sum
        # cancels against dy (errors of 4e-5 on dx of 8e-4), outside the task's tolerance
        f = torch.promote_types(y.dtype, torch.float32)
        yf, dyf = y.to(f), dy.to(f)
        return (yf * (dyf - (dyf * yf).sum(dim=-1, keepdim=True))).to(y.dtype)
