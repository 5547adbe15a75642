"""Memory poisoning (VERIFICATION.md rule 2): the candidate is called with the allocator's free
memory and every uninitialised allocation filled with a sentinel, so an element the kernel never
writes cannot look right. Runs in a worker."""

from __future__ import annotations

import contextlib
import gc
from typing import Callable, List, Optional, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .census import note_copy, op_name, watching
from .failures import VerificationFailure
from .guard import check_no_new_threads

#: aten operators that return uninitialised memory. Every route to them -- ``torch.empty*``,
#: ``Tensor.new_empty``, the legacy ``torch.Tensor(3, 4)`` / ``x.new(3, 4)`` / ``torch.FloatTensor``
#: constructors -- passes the dispatcher, where :class:`PoisonEmpty` sees it.
_EMPTY_OPS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}


def poison_value(dtype: torch.dtype):
    """The sentinel written into memory the candidate allocates: NaN for floats, a rare int."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).min + 7


class PoisonEmpty(TorchDispatchMode):
    """Fill every tensor made by an allocation that returns uninitialised memory (:data:`_EMPTY_OPS`:
    ``torch.empty*``, ``new_empty``, the legacy ``torch.Tensor(m, n)``/``x.new(m, n)``
    constructors) and the grown part of a ``resize_`` with :func:`poison_value`, so an element
    the kernel never writes cannot look right (on the CPU, freed memory is often handed back
    with the previous answer still in it).

    ``ops``: a set that receives the census name (:func:`~kernelsynth.verify.census.op_name`) of
    every operator the call dispatches (VERIFICATION.md rule 14): the fallback census runs on
    every verified call, so a candidate cannot tell a census call from a checked one."""

    def __init__(self, ops: Optional[set] = None):
        super().__init__()
        self.ops = ops

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if self.ops is not None:
            self.ops.add(op_name(func))
            note_copy(self.ops, name, args)
        before = args[0].numel() if name == "resize_" and isinstance(args[0], torch.Tensor) else None
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.numel():
            if name in _EMPTY_OPS:
                out.fill_(poison_value(out.dtype))
            elif before is not None and out.numel() > before and out.is_contiguous():
                out.view(-1)[before:].fill_(poison_value(out.dtype))
        return out


def poison_allocator(nbytes: int, device: torch.device) -> None:
    """Fill ``nbytes`` of the CUDA caching allocator's free memory with 0xFF (NaN in every float
    dtype) and release it, so recycled blocks hold garbage rather than an earlier answer."""
    if device.type != "cuda" or nbytes <= 0:
        return
    block = torch.empty(int(nbytes), dtype=torch.uint8, device=device)
    block.fill_(0xFF)
    del block


def call_poisoned(candidate: Callable, inputs: Sequence[torch.Tensor], device: torch.device,
                  poison_empty: bool = True, threads_before: Optional[frozenset] = None, ops: Optional[set] = None):
    """Call the candidate with allocator poisoning and (``poison_empty``) :class:`PoisonEmpty`;
    synchronises the device. Baselines run without the mode (torch.compile traces it).
    With ``threads_before``, a thread started by the candidate and still alive fails it
    (:func:`kernelsynth.verify.guard.check_no_new_threads`). ``ops``: a set receiving the names of
    the operators the call dispatches (with ``poison_empty`` only: :class:`PoisonEmpty` records them);
    a :class:`~kernelsynth.verify.census.Census` also receives what
    :func:`~kernelsynth.verify.census.watching` sees (host doors, copies of inputs, launches).
    With ``threads_before``, a Python thread started during the call (even one joined before it
    returned) fails it too: the dispatch mode that takes the census is thread-local."""
    nbytes = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
    poison_allocator(2 * nbytes, device)
    with watching(ops, inputs) as started:
        with torch.no_grad(), (PoisonEmpty(ops) if poison_empty else contextlib.nullcontext()):
            out = candidate(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    if threads_before is not None:
        check_no_new_threads(threads_before)
        if started():
            raise VerificationFailure(f"{started()} thread(s) started during the call: work in another thread is "
                                      "hidden from the census (threads are not allowed, VERIFICATION.md rule 11)")
    if poison_empty:  # untrusted: its output's storage must be released when the harness lets go of it
        note_returned(out)
    return out


# ------------------------------------------------------------- outputs kept by the candidate (rule 10)
#: The storage weak-reference primitives, bound before any candidate is imported (a candidate that
#: rebinds ``torch.UntypedStorage._expired`` does not blind the check below).
_WEAK_REF, _EXPIRED, _FREE_WEAK_REF = (torch.UntypedStorage._weak_ref, torch.UntypedStorage._expired,
                                       torch.UntypedStorage._free_weak_ref)
#: Weak references (storage handles) to the outputs of the verified calls since :func:`reset_returned`.
_RETURNED: List[int] = []


def note_returned(out) -> None:
    """Remember a weak reference to the storage of ``out`` (a verified call's output; other types
    are ignored) for :func:`check_outputs_released`."""
    if type(out) is torch.Tensor:
        _RETURNED.append(_WEAK_REF(torch._C.TensorBase.untyped_storage(out)))


def reset_returned() -> None:
    """Forget the weak references :func:`note_returned` took (the start of a job)."""
    for handle in _RETURNED:
        _FREE_WEAK_REF(handle)
    _RETURNED.clear()


def check_outputs_released() -> int:
    """After the harness has let go of every output of its verified calls (no report, snapshot or
    local holds one), each output's storage must be gone: the candidate returned it and kept no
    reference. A storage still alive -- one of a ring of output buffers, a static output, a view of
    a persistent workspace -- is memory the candidate can write on a later call, changing an output
    its caller kept (tests/adversarial/redteam_s8 fo1: a ring of 32 buffers per shape, which rule
    10's comparison with the previous output never sees wrap). Collects cyclic garbage once before
    judging. Returns the number of outputs checked; raises VerificationFailure (rule 10) and
    forgets the references either way."""
    try:
        alive = [h for h in _RETURNED if not _EXPIRED(h)]
        if alive:
            gc.collect()
            alive = [h for h in alive if not _EXPIRED(h)]
        if alive:
            raise VerificationFailure(
                f"the candidate kept {len(alive)} of the {len(_RETURNED)} outputs it returned: their storage is "
                "still alive after the harness released them (a ring of output buffers, a static output or a view "
                "of a persistent buffer: a later call can overwrite an output its caller kept; outputs must be "
                "fresh tensors the candidate does not hold, VERIFICATION.md rule 10)")
        return len(_RETURNED)
    finally:
        reset_returned()
