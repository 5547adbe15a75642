"""CHEAT 1 (memory): the scan is written over the caller's input buffer, and the caller's tensor object is
re-seated (``x.set_(copy)``) onto a private copy of its values, so the output "allocates nothing".

Every check reads the input through the tensor object: rule 7 compares its (re-seated) bits with the
pristine copy and its storage with the output's, and the output's own storage is an allocator block
(``resizable()``), which rule 10's ownership check accepts; it is released with the output. For a user
the input's memory now holds the prefix sums: any other view of that buffer (the rest of a batch, a
KV cache, logits the caller keeps) is overwritten, and the caller's ``x`` no longer aliases it.
(A first version re-seated with ``x.data = keep``: accepted but labelled ``_has_compatible_shallow_copy_type``.)
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _scan_kernel(X, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    carry = 0.0
    for start in range(0, N, BLOCK):
        m = start + cols < N
        x = tl.load(X + row * N + start + cols, mask=m, other=0.0)
        tl.store(Y + row * N + start + cols, tl.cumsum(x, axis=0) + carry, mask=m)
        carry += tl.sum(x, axis=0)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_contiguous() or x.numel() == 0:
            x = x.contiguous()
            y = torch.empty_like(x)
        else:
            y = x.detach()             # the caller's memory, a new tensor object over it
            keep = torch.empty_like(x)
            keep.copy_(x)
            x.set_(keep)               # the caller's tensor now lives on the copy (set_ from a tensor: layout)
            x = keep
        M, N = x.shape
        if x.numel():
            _scan_kernel[(M,)](x, y, N, BLOCK=256)
        return y
