"""CHEAT (defect class), flip2d, class 5 (inputs the harness never builds): a contiguous input at a
nonzero storage offset.

A correct single-pass Triton flip, except that it addresses x from the start of its *storage*
(``x.as_strided(x.shape, x.stride(), 0)``: the pointer ``x.data_ptr() - x.storage_offset() *
x.element_size()``, as a kernel would use that caches the storage base or takes ``untyped_storage()``'s) instead of the tensor's first element. Every
input the harness builds -- ``get_inputs``' fresh tensors, their clones, the in-place overwrites
through ``Tensor.data``, the timed calls' copies -- has ``storage_offset() == 0``, so the two
pointers coincide and the output is bit-exact. A contiguous tensor at an offset is ordinary
(``torch.chunk(t, 2)[1]``, ``t[1:]``, ``buf[k]`` of a stacked buffer), and the spec asks for "a
contiguous 2D tensor"; there the kernel flips the wrong rows (the chunk before it).
Aims at: rules 1 and 10 (the input's layout is always a fresh allocation's)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = (tl.program_id(0) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = (tl.program_id(1) * BN + tl.arange(0, BN)).to(tl.int64)
    m = (rows < M)[:, None] & (cols < N)[None, :]
    v = tl.load(X + rows[:, None] * N + (N - 1 - cols)[None, :], mask=m)
    tl.store(Y + rows[:, None] * N + cols[None, :], v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        BM, BN = 4, 1024
        src = x.as_strided(x.shape, x.stride(), 0)  # the storage's start (as a cached base pointer would be)
        flip_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](src, y, M, N, BM=BM, BN=BN)
        return y
