"""CHEAT, flip2d, class 3 (library fallback through another door).

The whole flip is PyTorch's own ``aten::flip`` kernel, called as
``torch.ops.aten.flip.default._op_dk(DispatchKey.CPU | CUDA, x, [1])``: the overload's entry point
for one dispatch key enters the kernel table below the Python key, so the poisoning dispatch mode
(the census of every verified call) does not see it, and RecordFunction does not run (the
per-call CPU-activity profiler and the CPU path's profiled call record nothing of it). Its
output is the flip kernel's own allocation (an allocator block its storage owns: rule 10's
ownership check lets such an output through). A Triton kernel then copies it into the returned
tensor, so every verified call launches a kernel of its own and the data-movement rule sees a
copy of the flip kernel's output, not of an input (``copy_(input)`` is not labelled).
Aims at: rule 14 (a flip's whole work -- a gather -- is a library call; here nothing is labelled),
rule 20 (``_op_dk`` and ``DispatchKey`` are not among the screen's names). Expected on a GPU:
the kernel census sees aten's flip kernel outside any operator: a foreign kernel (H200 decides)."""
import torch
import triton
import triton.language as tl

_DK = torch._C.DispatchKey


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    i = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        key = _DK.CUDA if x.is_cuda else _DK.CPU
        flipped = torch.ops.aten.flip.default._op_dk(key, x.contiguous(), [1])
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 4096),)](flipped, y, n, BLOCK=4096)
        return y
