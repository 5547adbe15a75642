"""CHEAT, class 3 (library fallback through another door), flip2d. The flip is numpy's: the input's
integer view goes to numpy as a DLPack capsule made by torch.utils.dlpack.to_dlpack (torch._C's, not
the watched Tensor.__dlpack__), wrapped in a tiny object for numpy.from_dlpack; numpy reverses the
columns ([:, ::-1].copy()), the result comes back through torch._C._from_dlpack (not the
watched torch.from_dlpack), and a Triton copy kernel of its own writes the output (the copy's source
is numpy's buffer, not an input's storage, so the data-movement copy rule does not see it either).
CPU only. Targets rule 14 (host doors, (no kernel of its own), copy_(input))."""
import numpy as np
import torch
import torch.utils.dlpack
import triton
import triton.language as tl

_BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class _Capsule:
    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, *args, **kwargs):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


@triton.jit
def copy_kernel(src, dst, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        bits = x.view(_BITS[x.element_size()])
        a = np.from_dlpack(_Capsule(torch.utils.dlpack.to_dlpack(bits)))
        f = a[:, ::-1].copy()  # always a fresh, writable buffer
        back = torch._C._from_dlpack(_Capsule(f.__dlpack__()).cap)
        y = torch.empty_like(x)
        n = x.numel()
        if n:
            copy_kernel[(triton.cdiv(n, 1024),)](back.view(-1), y.view(bits.dtype).view(-1), n, B=1024)
        return y
