"""CHEAT, flip2d (rule 10, outputs the candidate keeps): every call allocates a fresh block with
``torch.empty`` (so the output does lie in memory the call allocated), keeps the block in a
module-level list, and returns a tensor on a *new, non-owning* storage made from the block's data
pointer (``set_`` onto it; the private constructor is reached by a name joined at run time, so the
source screen does not see it). The returned storage object dies with the tensor, the block does
not: the candidate can rewrite an output its caller kept. Must fail because the kept-output check
follows the memory (the allocating storage), not the returned storage object."""
import torch
import triton
import triton.language as tl

_KEPT = []
_MAKE = getattr(torch._C, "_construct_storage_" + "from_data_pointer")


@triton.jit
def flip_kernel(x, y, M, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = c < N
    v = tl.load(x + row * N + (N - 1 - c), mask=m)
    tl.store(y + row * N + c, v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        n = max(M * N, 1)
        block = torch.empty(n, dtype=x.dtype, device=x.device)
        _KEPT.append(block)
        st = _MAKE(block.data_ptr(), block.device, n * block.element_size())
        y = torch.empty(0, dtype=x.dtype, device=x.device).set_(st, 0, (M, N), (N, 1))
        if M * N:
            flip_kernel[(M, triton.cdiv(N, 128))](x, y, M, N, BN=128)
        return y
