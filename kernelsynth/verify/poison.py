"""Memory poisoning (VERIFICATION.md rule 2): the candidate is called with the allocator's free
memory and every uninitialised allocation filled with a sentinel, so an element the kernel never
writes cannot look right. Runs in a worker."""

from __future__ import annotations

import contextlib
import gc
from typing import Callable, List, Optional, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .dynamo_deferral import defer
from .census import note_copy, op_name, watching
from .comparison import _S, _T, shadowed_attributes
from .failures import VerificationFailure
from .guard import check_no_new_threads, check_numeric, check_trace_hooks

#: aten operators that return uninitialised memory. Every route to them -- ``torch.empty*``,
#: ``Tensor.new_empty``, the legacy ``torch.Tensor(3, 4)`` / ``x.new(3, 4)`` / ``torch.FloatTensor``
#: constructors -- passes the dispatcher, where :class:`PoisonEmpty` sees it.
_EMPTY_OPS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"})


def poison_value(dtype: torch.dtype):
    """The sentinel written into memory the candidate allocates: NaN for floats, a rare int."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).min + 7


@defer  # its raw __torch_dispatch__ until torch._dynamo is imported (dynamo_deferral)
class PoisonEmpty(TorchDispatchMode):
    """Fill every tensor made by an allocation that returns uninitialised memory (:data:`_EMPTY_OPS`:
    ``torch.empty*``, ``new_empty``, the legacy ``torch.Tensor(m, n)``/``x.new(m, n)``
    constructors) and the grown part of a ``resize_`` with :func:`poison_value`, so an element
    the kernel never writes cannot look right (on the CPU, freed memory is often handed back
    with the previous answer still in it).

    ``ops``: a set that receives the census name (:func:`~kernelsynth.verify.census.op_name`) of
    every operator the call dispatches (VERIFICATION.md rule 14): the fallback census runs on
    every verified call, so a candidate cannot tell a census call from a checked one.

    ``fresh``: a dict that receives, for every storage an operator's output holds that none of
    its arguments held before it ran (memory allocated by the call: ``empty*``, ``zeros``,
    ``clone``, a library op's result, the grown storage of a ``resize_``), ``{data_ptr: (end,
    weak reference to the storage)}`` -- not for :data:`NOT_FRESH` (``from_file``: a shared file
    mapping the candidate can map again and write). :func:`note_returned` requires the call's
    output to lie in one of them (VERIFICATION.md rule 10); the caller frees the weak references
    (:func:`note_returned` does)."""

    def __init__(self, ops: Optional[set] = None, fresh: Optional[dict] = None):
        super().__init__()
        self.ops = ops
        self.fresh = fresh

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if self.ops is not None:
            self.ops.add(op_name(func))
            note_copy(self.ops, name, args)
        before = args[0].numel() if name == "resize_" and isinstance(args[0], torch.Tensor) else None
        held = _held_storages(args, kwargs) if self.fresh is not None and name not in NOT_FRESH else None
        out = func(*args, **(kwargs or {}))
        if held is not None:
            _note_fresh(self.fresh, out, held)
        if isinstance(out, torch.Tensor) and out.numel():
            if name in _EMPTY_OPS:
                out.fill_(poison_value(out.dtype))
            elif before is not None and out.numel() > before and out.is_contiguous():
                out.view(-1)[before:].fill_(poison_value(out.dtype))
        return out


#: Operators whose output memory is not the call's own even when no argument held it: a file
#: mapping (``from_file(shared=True)``: mapped again later, a write there changes a kept output).
NOT_FRESH = frozenset({"from_file"})
#: Unwrapped accessors, bound before any candidate is imported (the census wraps
#: ``torch.Tensor.untyped_storage``; a candidate may rebind ``Tensor`` methods).
#: Storages are read through ``_S`` (comparison.py): an instance ``data_ptr`` on a storage object
#: answered the ownership check with a throwaway address (session 15 attack).
_UNTYPED, _DATA_PTR = _T.untyped_storage, _T.data_ptr
_TYPED_UNTYPED = torch.TypedStorage.untyped


def _storage_ptr(x) -> Optional[int]:
    """The data pointer of the storage of ``x`` (a tensor or a storage), None for anything else."""
    try:  # C methods: a storage object can carry an instance ``data_ptr`` (session 15 attack)
        if isinstance(x, torch.Tensor):
            return _S.data_ptr(_UNTYPED(x))
        if isinstance(x, torch._C.StorageBase):
            return _S.data_ptr(x)
        if isinstance(x, torch.TypedStorage):
            return _S.data_ptr(_TYPED_UNTYPED(x))
    except (RuntimeError, NotImplementedError):  # no storage (sparse, nested, fake)
        return None
    return None


def _leaves(obj):
    """The leaves of an operator's arguments or output: what is inside lists, tuples and dicts
    (the only containers an operator schema passes: ``Tensor[]``, ``Tensor?[]``, tuples of results,
    the kwargs dict), recursively. A third of a verified call's cost was ``torch.utils._pytree``'s
    registry lookups for the same walk (bench/call_overhead.py)."""
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _leaves(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _leaves(x)
    else:
        yield obj


def _held_storages(args, kwargs) -> set:
    """The storage data pointers the tensors and storages among an operator's arguments hold."""
    held = {_storage_ptr(x) for x in _leaves(args)}
    if kwargs:
        held.update(_storage_ptr(x) for x in _leaves(kwargs))
    held.discard(None)
    return held


def _note_fresh(fresh: dict, out, held: set) -> None:
    """Record in ``fresh`` each storage of ``out``'s tensors whose memory no argument held
    (:class:`PoisonEmpty`'s ``fresh``)."""
    for t in _leaves(out):
        if not isinstance(t, torch.Tensor):
            continue
        try:
            st = _UNTYPED(t)
        except (RuntimeError, NotImplementedError):
            continue
        ptr, size = _S.data_ptr(st), _S.nbytes(st)
        if not ptr or ptr in held or not size:
            continue
        old = fresh.pop(ptr, None)
        if old is not None:  # the same address again (memory freed and reused): the newer storage
            _FREE_WEAK_REF(old[1])
        fresh[ptr] = (ptr + size, _WEAK_REF(st))


def output_extent(out: torch.Tensor):
    """``(first byte, end)`` of the memory the elements of ``out`` occupy (strides >= 0, as
    PyTorch's); None for an empty tensor."""
    if not _T.numel(out):
        return None
    lo = _DATA_PTR(out)
    span = 1 + sum((n - 1) * st for n, st in zip(_T.size(out), _T.stride(out)))
    return lo, lo + span * _T.element_size(out)


def _inside_input(extent, x) -> bool:
    """Whether the byte range ``extent`` overlaps the storage of input ``x``."""
    if not isinstance(x, torch.Tensor):
        return False
    try:
        st = _UNTYPED(x)
    except (RuntimeError, NotImplementedError):
        return False
    lo, hi = extent
    return _S.data_ptr(st) < hi and lo < _S.data_ptr(st) + _S.nbytes(st)


def poison_allocator(nbytes: int, device: torch.device) -> None:
    """Fill ``nbytes`` of the CUDA caching allocator's free memory with 0xFF (NaN in every float
    dtype) and release it, so recycled blocks hold garbage rather than an earlier answer."""
    if device.type != "cuda" or nbytes <= 0:
        return
    block = torch.empty(int(nbytes), dtype=torch.uint8, device=device)
    block.fill_(0xFF)
    del block


_DTYPE_OF = _T.dtype.__get__


def input_identity(x):
    """What makes ``x`` the tensor a caller passed, read through C methods: its storage's data
    pointer, storage offset, sizes, strides and dtype (None for a non-tensor or a tensor without a
    storage). Rule 7 (VERIFICATION.md): a call must leave each input's identity as it found it."""
    if not isinstance(x, torch.Tensor):
        return None
    try:
        return _storage_ptr(x), _T.storage_offset(x), tuple(_T.size(x)), tuple(_T.stride(x)), _DTYPE_OF(x)
    except (RuntimeError, NotImplementedError):  # no storage (sparse, nested, fake)
        return None


def check_input_identities(inputs: Sequence, before: Sequence) -> None:
    """Raise VerificationFailure when an input's :func:`input_identity` differs from ``before``:
    the candidate re-seated the caller's tensor (``set_``, ``.data =``, ``as_strided_``, a
    ``resize_``) -- the caller's other views no longer see it, and a row-major read of it may be
    transposed (tests/adversarial/redteam_s24 cu_a1: the output written into the caller's old
    storage, x moved onto a private copy; cs_l1: x left column-major)."""
    for i, (x, was) in enumerate(zip(inputs, before)):
        now = input_identity(x)
        if now != was:
            what = [name for name, a, b in zip(("storage", "storage offset", "shape", "strides", "dtype"),
                                               was or (None,) * 5, now or (None,) * 5) if a != b]
            raise VerificationFailure(f"input {i} is no longer the tensor the caller passed: its {', '.join(what)} "
                                      "changed during the call (a kernel reads its inputs; it does not re-seat, "
                                      "resize or restride them: VERIFICATION.md rule 7)")


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
    identities = [input_identity(x) for x in inputs] if poison_empty else None
    fresh: dict = {}  # storages allocated during the call (PoisonEmpty's ``fresh``)
    try:
        with watching(ops, inputs) as started:
            with torch.no_grad(), (PoisonEmpty(ops, fresh) if poison_empty else contextlib.nullcontext()):
                out = candidate(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        check_trace_hooks()  # before the harness computes anything from the output
        if poison_empty:  # untrusted: no numeric setting left changed for the harness's own computations (rule 13)
            check_numeric()
        if identities is not None:
            check_input_identities(inputs, identities)
        shadowing = sorted({name for x in inputs if isinstance(x, torch.Tensor) for name in shadowed_attributes(x)})
        if shadowing:  # the harness reads, overwrites and clones these inputs after the call (rules 4, 9, 10)
            raise VerificationFailure(f"the candidate gave its input tensors attributes that shadow torch.Tensor's "
                                      f"({', '.join(shadowing[:6])}): the harness's later reads and in-place changes "
                                      "of the input would go through them (layout rule)")
        if threads_before is not None:
            check_no_new_threads(threads_before)
            if started():
                raise VerificationFailure(f"{started()} thread(s) started during the call: work in another thread is "
                                          "hidden from the census (threads are not allowed, VERIFICATION.md rule 11)")
        if poison_empty:  # untrusted: its output must lie in memory the call allocated, released with the output
            note_returned(out, fresh, inputs, hosted=ops is not None and any(
                isinstance(o, str) and o.startswith("host:") for o in ops))
    finally:
        for _end, handle in fresh.values():
            _FREE_WEAK_REF(handle)
    return out


# ------------------------------------------------------------- outputs kept by the candidate (rule 10)
#: The storage weak-reference primitives, bound before any candidate is imported (a candidate that
#: rebinds ``torch.UntypedStorage._expired`` does not blind the check below).
_WEAK_REF, _EXPIRED, _FREE_WEAK_REF = (torch.UntypedStorage._weak_ref, torch.UntypedStorage._expired,
                                       torch.UntypedStorage._free_weak_ref)
#: Weak references (storage handles) to the outputs of the verified calls since :func:`reset_returned`.
_RETURNED: List[int] = []


def note_returned(out, fresh: Optional[dict] = None, inputs: Sequence = (), hosted: bool = False) -> None:
    """Remember a weak reference to the memory of ``out`` (a verified call's output; other types
    are ignored) for :func:`check_outputs_released`.

    Without ``fresh``, to the output's own storage. With ``fresh`` (the storages the call
    allocated, :class:`PoisonEmpty`), the output's bytes (:func:`output_extent`) must lie inside
    one of them that is still alive, and the weak reference goes to that one (popped from
    ``fresh``): ownership is judged by the memory, not by the storage object, so a tensor put on a
    new non-owning storage over a buffer the candidate keeps (``_construct_storage_from_data_pointer``
    plus ``set_``: tests/adversarial/redteam_s9 fa1, a ring of 64 output slots) fails here, and so
    does a view of a buffer made on an earlier call. An empty output only gets its own storage's
    reference. An output in the memory of one of the call's ``inputs`` is left to rule 7 (its
    reason names the input), and one outside every fresh storage whose own storage owns its memory
    (``resizable()``: an allocator's block, e.g. a buffer kept from an earlier call) gets its own
    storage's weak reference (rules 9-10 name such a reuse first, the release check fails it at
    the end); so does one when the census already labelled a host door (``hosted``: memory from
    ``torch.from_numpy`` and the like, which labels the observation, rule 14). Raises
    VerificationFailure (rule 10) when the output lies in no fresh storage and its own storage does
    not own its memory (a storage made from a raw data pointer, a shared mapping)."""
    if type(out) is not torch.Tensor:
        return
    if out.device.type == "cpu" and _S.is_shared(_UNTYPED(out)):  # every CUDA storage answers True
        raise VerificationFailure(
            "the output lies in shared memory (share_memory_, a shared file mapping): another mapping of that "
            "memory can change the output after the call returned; outputs must be fresh tensors (VERIFICATION.md "
            "rule 10; redteam_s16 c1)")
    extent = output_extent(out) if fresh is not None else None
    if extent is not None and any(_inside_input(extent, x) for x in inputs):
        extent = None  # rule 7 rejects it with its own reason (verify.comparison.check_inputs_untouched)
    if extent is None:
        _RETURNED.append(_WEAK_REF(_UNTYPED(out)))
        return
    lo, hi = extent
    owner = [p for p, (end, h) in fresh.items() if p <= lo and hi <= end and not _EXPIRED(h)]
    if not owner and (_S.resizable(_UNTYPED(out)) or hosted):
        # memory an allocator gave a storage that owns it (a buffer from an earlier call): its own
        # storage's weak reference judges it, and rules 9-10 name the reuse on the way
        _RETURNED.append(_WEAK_REF(_UNTYPED(out)))
        return
    if not owner:
        raise VerificationFailure(
            "the output does not lie in memory allocated during the call (a buffer kept from an earlier call or "
            "memory the candidate holds elsewhere, e.g. a tensor put on a storage made from a data pointer: a later "
            "call can overwrite an output its caller kept; outputs must be fresh tensors, VERIFICATION.md rule 10)")
    _RETURNED.append(fresh.pop(min(owner, key=lambda p: fresh[p][0] - p))[1])


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
    10's comparison with the previous output never sees wrap). Collects cyclic garbage before
    judging: generations 0-1 first, all of them only when an output is still alive then (a full
    collection took 0.3-0.4 s per job on this project's 2-core CPU; the young ones, milliseconds).
    Returns the number of outputs checked; raises VerificationFailure (rule 10) and forgets the
    references either way."""
    try:
        alive = [h for h in _RETURNED if not _EXPIRED(h)]
        for generation in (1, 2):  # the young generations first (a cycle of the last calls: milliseconds)
            if alive:
                gc.collect(generation)
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
