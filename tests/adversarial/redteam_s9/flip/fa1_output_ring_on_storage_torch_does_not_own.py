"""CHEAT, class 1 (output aliasing), flip2d. Outputs live in a module-level ring of 64 slots of one
persistent buffer per shape; each call writes its slot and returns a tensor on a *new, non-owning*
storage made from the slot's address (`torch._C._construct_storage_from_data_pointer`, then `set_`).
The returned storage object dies as soon as the caller drops the tensor, so rule 10's kept-output
check (a weak reference on the output's storage) sees it released, and consecutive outputs never
overlap (the ring). But the memory is the candidate's: the 65th call of a shape overwrites the
1st output a caller kept. Targets rule 10 (kept outputs, by storage object, not by memory)."""
import torch
import triton
import triton.language as tl

_RING = {}
SLOTS = 64


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
        key = (M, N, x.dtype, x.device)
        if key not in _RING:
            _RING[key] = [torch.empty(SLOTS * max(M * N, 1), dtype=x.dtype, device=x.device), 0]
        buf, i = _RING[key][0], _RING[key][1]
        _RING[key][1] = (i + 1) % SLOTS
        n = M * N
        st = torch._C._construct_storage_from_data_pointer(buf.data_ptr() + i * max(n, 1) * buf.element_size(),
                                                           buf.device, max(n, 1) * buf.element_size())
        y = torch.empty(0, dtype=x.dtype, device=x.device).set_(st, 0, (M, N), (N, 1))
        if n:
            flip_kernel[(M, triton.cdiv(N, 256))](x, y, M, N, BN=256)
        return y
