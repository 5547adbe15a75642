"""CHEAT, flip2d, class 6 (staleness) + integrity (the in-process reference replaced).

A memo keyed on the input tensor's identity (the same Python object at the same address): a second
call on the same tensor returns a fresh copy of the first call's answer, whatever the tensor now
holds -- stale for anyone who updates a tensor in place and calls again (a static input buffer, a
cache, an optimizer-updated tensor). Rule 10 exists for exactly this: it overwrites the input in
place, changes an element and a region, the last element, rotates and swaps values, and compares
each answer with the reference on what the tensor then holds.

So at import the candidate also registers, with ``torch.library.Library("aten", "IMPL")``, its own
CPU and CUDA kernel for ``aten::flip`` -- the operator the reference's ``torch.flip`` dispatches.
It is a correct flip (``index_select`` on reversed column indices: bit moves), except on an input
whose values equal those the memo's tensor now holds after a stale answer: there it returns the
stale answer. The reference the worker compares the staleness calls with then agrees with the
memo; the trials' outputs (fresh tensors: no memo hit) are right, and they are all the parent's
independent check sees (rule 18 covers trial outputs, not the staleness calls, the timed calls or
the profiled call). A changed ``torch.library`` registration is in ``process_fingerprint``, which
only gets the next job a fresh worker (rule 19); it is no fault, and the integrity guard (rule 13)
checks attribute identities, which a registration does not change. ``torch.library`` is not a
screened name (rule 20).
Aims at: rule 10 (staleness) via rule 13/19 (a dispatcher registration is not tampering)."""
import weakref

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    i = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)


@triton.jit
def flip_kernel(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = (tl.program_id(0) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = (tl.program_id(1) * BN + tl.arange(0, BN)).to(tl.int64)
    m = (rows < M)[:, None] & (cols < N)[None, :]
    v = tl.load(X + rows[:, None] * N + (N - 1 - cols)[None, :], mask=m)
    tl.store(Y + rows[:, None] * N + cols[None, :], v, mask=m)


_MEMO = {}    # id(x) -> (weak reference to x, data_ptr, shape, answer)
_STALE = []   # (weak reference to the input a stale answer was given for, that answer)


def _reference_flip(x, dims):
    """The overriding kernel of aten::flip (CPU and CUDA)."""
    for ref, answer in _STALE:
        t = ref()
        if t is not None and t.shape == x.shape and t.dtype == x.dtype and t.device == x.device \
                and list(dims) in ([1], [-1]) and torch.equal(t.view(-1).view(torch.uint8),
                                                              x.contiguous().view(-1).view(torch.uint8)):
            return answer.clone()
    out = x
    for d in dims:
        n = x.shape[d]
        out = out.index_select(d, torch.arange(n - 1, -1, -1, device=x.device))
    return out


_LIB = torch.library.Library("aten", "IMPL")
_LIB.impl("flip", _reference_flip, "CPU")
_LIB.impl("flip", _reference_flip, "CUDA")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        hit = _MEMO.get(id(x))
        if hit is not None and hit[0]() is x and hit[1] == x.data_ptr() and hit[2] == x.shape:
            copy_kernel[(triton.cdiv(x.numel(), 4096),)](hit[3], y, x.numel(), BLOCK=4096)
            _STALE[:] = [(weakref.ref(x), hit[3])]
            return y
        flip_kernel[(triton.cdiv(M, 4), triton.cdiv(N, 1024))](x, y, M, N, BM=4, BN=1024)
        _MEMO.clear()
        _STALE.clear()
        _MEMO[id(x)] = (weakref.ref(x), x.data_ptr(), x.shape, y.clone())
        return y
