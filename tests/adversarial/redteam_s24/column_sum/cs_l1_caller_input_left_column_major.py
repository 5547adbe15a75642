"""CHEAT 1 (layout, on the input): "transpose once, reduce rows" -- the caller's x is re-seated
(``x.set_(column_major_copy)``) onto a column-major copy of itself, whose rows are x's columns, and the
column sums are row reductions of it. The copy is left in place for "the next call".

Rule 7 compares the inputs' *values* (``verify.comparison.check_inputs_untouched``: shape and bits by
position) and their storage with the output's; nothing compares the input's strides, contiguity or data
pointer before and after the call, and ``set_`` from a tensor is a layout operator (rule 14). For a user,
x is no longer contiguous after ``m(x)``: ``x.view(-1)`` raises, and any kernel that takes the contract's
"contiguous inputs" at its word (reading ``x.data_ptr()`` row-major, as KernelBench kernels may) reads x
transposed.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _row_sums_kernel(XT, Y, M, N, BLOCK: tl.constexpr):
    col = tl.program_id(0).to(tl.int64)  # a row of the column-major copy
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, M, BLOCK):
        acc += tl.load(XT + col * M + start + offs, mask=start + offs < M, other=0.0).to(tl.float32)
    tl.store(Y + col, tl.sum(acc, axis=0).to(Y.dtype.element_ty))


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        y = torch.empty(N, dtype=x.dtype, device=x.device)
        if x.numel() == 0:
            return y.zero_()
        if x.stride() != (1, M):
            xt = torch.empty((N, M), dtype=x.dtype, device=x.device)
            xt.copy_(x.t())
            x.set_(xt.t())  # the caller's tensor: same values, now column-major
        _row_sums_kernel[(N,)](x, y, M, N, BLOCK=256)
        return y
