"""A flip2d candidate of one torch operator (``torch.flip`` on the last dim), for measuring the
harness's own cost per candidate on the CPU (``python bench/cost11_cpu.py flip2d --external
bench/harness_flip.py``): its kernel costs microseconds on the interpreter's shapes, so what is
left is the protocol's work. A run labels it a library call (rule 14); it is no ladder version."""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=(-1,))
