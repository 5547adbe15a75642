"""The reference's outputs, kept across the jobs of one worker (references/VERIFICATION.md, "Cost
per candidate"). Runs in a worker.

Every candidate of a task and dtype meets the same trials: the inputs derive from the run seed, the
shape and the trial (:func:`~kernelsynth.verify.inputs.trial_inputs`), and the reference is built
from a seed of the same (:func:`kernelsynth.jobs.evaluate`'s ``models_for``, rule 21). So the
reference's outputs -- the float64 reference of every compared call and rule 23's honest
computations -- are the same for every candidate of a run, and were about 30 % of a conv_relu_maxpool
candidate's protocol time on the H200 (session 12, py-spy). A :class:`ReferenceMemo` keeps them for
the worker's later jobs, keyed by

* how the reference model was built (:data:`BUILD_ATTR`, set by the job: the reference file's
  digest, the constructor arguments, the build seed and perturbation, the dtype), and
* what the reference is given: every input's dtype, shape, strides, storage offset, device and a
  fingerprint of its bits computed on its device (:func:`fingerprint`), and the other arguments'
  ``repr``,

so an input drawn differently (a ``get_inputs`` that ignores its generator, a candidate that
changed its input) misses instead of meeting another trial's answer. A hit returns the kept
tensors themselves, which the protocol only reads. It also keeps one reference model per build
(:meth:`ReferenceMemo.module`), handed out as deep copies: the parameters a native kernel takes
from the reference model of each trial, without drawing them again in every job.

Who may see it: the memo holds the right answer to every trial a later candidate of the run will
meet, so no untrusted code may run in a process that holds one. A job with ``fresh_worker`` (every
external and generated candidate's, :class:`kernelsynth.stages.exploration.Exploration`) starts in
a worker that has run no other job (:meth:`kernelsynth.workers.WorkerPool._start_next`) and is
replaced after it, and :func:`kernelsynth.jobs.evaluate` turns the memo off (and empties it) for
such a job; only the ladder's versions, written with the task, share a worker and its memo.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, Callable, Dict, Hashable, Optional, Sequence, Tuple

import torch

#: The attribute :func:`kernelsynth.jobs.evaluate` sets on each reference model it builds: a
#: hashable description of the build (no attribute: the model's outputs are not memoised).
BUILD_ATTR = "_kernelsynth_build"
#: Inputs with more elements than this are not fingerprinted (the memo is skipped): the
#: fingerprint's int64 words and positions take 16 bytes per element (rule 12's huge shape has
#: more than 2^31).
MAX_FINGERPRINT_ELEMENTS = 2**27
#: The memo's budget as a fraction of the device's memory (a GPU), at most :data:`MAX_BYTES`;
#: :data:`CPU_BYTES` on the CPU. Once full, nothing more is kept (the first trials stay: every
#: candidate meets the trials in the same order, so keeping the first ones gives the same hits as
#: any other choice, and evicting would make a working set above the budget miss every time).
DEVICE_FRACTION = 0.05
MAX_BYTES = 8 * 2**30
CPU_BYTES = 512 * 2**20

#: The first part of the key of a kept reference model (:meth:`ReferenceMemo.module`).
MODULE_KEY = "module"

_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
#: Odd multipliers of the fingerprint's position hash (Knuth's golden-ratio constant and a second
#: 64-bit odd constant, as signed int64: the products wrap modulo 2^64).
_M1 = 0x9E3779B97F4A7C15 - 2**64
_M2 = 0xC2B2AE3D27D4EB4F - 2**64


def _words(x: torch.Tensor, widen: bool = True) -> Optional[torch.Tensor]:
    """The bits of ``x`` (any dtype; complex as its real pairs, bool as bytes) as a flat int64
    tensor on its device, one word per element (``widen=False``: the signed integer type of the
    element's size, not widened); None for a dtype of another size."""
    x = x.detach()
    if x.is_complex():
        x = torch.view_as_real(x)
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    word = _WORDS.get(x.element_size())
    if word is None:
        return None
    w = x.contiguous().reshape(-1).view(word)
    return w.to(torch.int64) if widen else w


def _positions(n: int, device: torch.device) -> torch.Tensor:
    """The position hashes of :func:`_hash` for ``n`` elements (int64 on ``device``)."""
    k = torch.arange(n, device=device, dtype=torch.int64) * _M1 + _M2
    return k ^ (k >> 31)


def _fused(x: torch.Tensor):
    """:mod:`kernelsynth.verify.fused_sums` when ``x`` is on a GPU and the fused paths are on, else None."""
    if x.device.type != "cuda":
        return None
    from . import fused_sums
    return fused_sums if fused_sums.enabled() else None


def _hash(x: torch.Tensor) -> Optional[torch.Tensor]:
    """Two int64 sums over ``x``'s elements, each bit pattern weighted by a hash of its position
    (a change of any one element, and a move of a value to another position, changes them). On a
    GPU in one Triton pass (:func:`kernelsynth.verify.fused_sums.fused_hash`, the same values;
    ``KERNELSYNTH_FUSED_SUMS=0``: the PyTorch operations, about a dozen launches)."""
    fused = _fused(x)
    if fused is not None:
        w = _words(x, widen=False)
        return None if w is None else fused.fused_hash(w, _M1, _M2)
    w = _words(x)
    if w is None:
        return None
    k = _positions(w.numel(), w.device)
    return torch.stack([(w * (k | 1)).sum(), (w ^ (k * _M2)).sum()])


#: :func:`output_hashes` hashes tensors of up to this many elements that share a device and an
#: element count together (stacked: their int64 words are copied once more).
BATCH_ELEMENTS = 2**20


def output_hashes(tensors: Sequence[torch.Tensor]) -> list:
    """:func:`_hash` of each of ``tensors`` (None where it gives None, and for a None entry), the same int64 sums (a sum of
    int64 products wraps modulo 2^64 in any order): those of one device and element count, up to
    :data:`BATCH_ELEMENTS` each, stacked and hashed with one set of position hashes (a shape's kept
    outputs, :func:`kernelsynth.verify.protocol.check_kept_outputs`: about a dozen device operations
    per output before, four now, plus a few per group)."""
    out: list = [None] * len(tensors)
    groups: Dict[tuple, list] = {}
    for i, x in enumerate(tensors):
        if x is not None and _fused(x) is not None:  # one Triton pass each
            out[i] = _hash(x)
            continue
        w = None if x is None else _words(x)
        if w is None:
            continue
        if w.numel() > BATCH_ELEMENTS:
            out[i] = _hash(x)
        else:
            groups.setdefault((w.device, w.numel()), []).append((i, w))
    for (device, n), items in groups.items():
        if len(items) == 1:
            (i, w), = items
            k = _positions(n, device)
            out[i] = torch.stack([(w * (k | 1)).sum(), (w ^ (k * _M2)).sum()])
            continue
        words = torch.stack([w for _, w in items])
        k = _positions(n, device)
        sums = torch.stack([(words * (k | 1)).sum(1), (words ^ (k * _M2)).sum(1)], 1)
        for row, (i, _) in enumerate(items):
            out[i] = sums[row]
    return out


#: The bits' fingerprint of one tensor (two int64 sums, on its device): also what the protocol keeps of
#: every output of a shape to check them again after the shape's calls (verify.protocol.check_kept_outputs).
output_hash = _hash


def fingerprint(args: Sequence[Any]) -> Optional[tuple]:
    """A hashable description of ``args`` for the memo's key: per tensor its dtype, shape,
    strides, storage offset, device type and :func:`_hash` of its bits (one device
    synchronisation for all of them), per other argument its ``repr``. None when a tensor has more
    than :data:`MAX_FINGERPRINT_ELEMENTS` elements or a dtype :func:`_words` cannot read (the
    call is then not memoised)."""
    meta, sums = [], []
    for x in args:
        if isinstance(x, torch.Tensor):
            if x.numel() > MAX_FINGERPRINT_ELEMENTS or type(x) is not torch.Tensor:
                return None
            meta.append((str(x.dtype), tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.device.type))
            if x.numel():
                h = _hash(x)
                if h is None:
                    return None
                sums.append(h.to(sums[0].device) if sums else h)
        else:
            meta.append(("value", repr(x)))
    values = tuple(torch.cat(sums).tolist()) if sums else ()
    return tuple(meta), values


def _versions(args: Sequence[Any]) -> tuple:
    """Each tensor's identity and in-place version counter among ``args`` (None for other values; a
    tensor without a version counter, an inference tensor, gives a fresh object, equal to nothing)."""
    out = []
    for x in args:
        if isinstance(x, torch.Tensor):
            try:
                out.append((id(x), x._version))
            except RuntimeError:  # inference tensors track no version: never reused
                out.append(object())
        else:
            out.append(None)
    return tuple(out)


def _tensors(value: Any):
    if isinstance(value, torch.nn.Module):
        yield from value.parameters()
        yield from value.buffers()
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


class ReferenceMemo:
    """The worker's memo of reference outputs (module docstring). :meth:`begin` at the start of
    every job turns it on or off; :meth:`lookup` / :meth:`keep` around each reference
    computation. ``hits``/``calls``: of the current job."""

    def __init__(self):
        self.entries: Dict[Hashable, Any] = {}
        self.nbytes = 0
        self.budget = 0
        self.enabled = False
        self.hits = self.calls = 0
        #: ``[args, versions, fingerprint or None]`` while :meth:`holding` (None outside)
        self._held: Optional[list] = None

    def begin(self, enabled: bool, device: torch.device) -> None:
        """Start a job: the memo is used when ``enabled`` (else it is emptied, so nothing it held
        stays reachable), with its budget for ``device`` (:data:`DEVICE_FRACTION`)."""
        self.hits = self.calls = 0
        self.enabled = enabled
        if not enabled:
            self.clear()
            return
        if device.type == "cuda":
            total = torch.cuda.get_device_properties(device).total_memory
            self.budget = min(MAX_BYTES, int(total * DEVICE_FRACTION))
        else:
            self.budget = CPU_BYTES

    def clear(self) -> None:
        self.entries.clear()
        self.nbytes = 0

    def key(self, model: Any, args: Sequence[Any], what: Hashable) -> Optional[tuple]:
        """The key of computing ``what`` (a label and its settings) of ``model`` on ``args``; None
        when the memo is off, the model has no :data:`BUILD_ATTR` or ``args`` cannot be
        fingerprinted."""
        if not self.enabled:
            return None
        build = getattr(model, BUILD_ATTR, None)
        if build is None:
            return None
        held = self._held
        if held is not None and held[0] is args and _versions(args) == held[1]:
            if held[2] is None:
                held[2] = (fingerprint(args),)
            fp = held[2][0]
        else:
            fp = fingerprint(args)
        return None if fp is None else (build, what, fp)

    @contextlib.contextmanager
    def holding(self, args: Sequence[Any]):
        """Within the block, :meth:`key` fingerprints ``args`` -- this very sequence object, e.g. the
        untouched copies of a trial's inputs that the reference and then the honest computations are
        asked about (:func:`kernelsynth.verify.protocol.verify`) -- once and reuses it, as long as
        no tensor of it has been changed in place meanwhile (every tensor's ``_version`` as at the
        block's start; else it is fingerprinted again, as outside the block). One fingerprint (a
        device synchronisation and its hashes) per trial instead of one per lookup. A block for the
        sequence an enclosing block holds, unchanged, keeps the enclosing one's."""
        previous = self._held
        if previous is not None and previous[0] is args and previous[1] == _versions(args):
            yield  # already held, unchanged (a caller's block around this one): its fingerprint serves
            return
        self._held = [args, _versions(args), None]
        try:
            yield
        finally:
            self._held = previous

    def lookup(self, key: Optional[tuple]) -> Tuple[bool, Any]:
        """``(True, value)`` for a kept key, else ``(False, None)``; counts the call."""
        if key is None:
            return False, None
        self.calls += 1
        if key in self.entries:
            self.hits += 1
            return True, self.entries[key]
        return False, None

    def keep(self, key: Optional[tuple], value: Any) -> Any:
        """Keep ``value`` under ``key`` while the budget allows (its tensors' bytes); returns it."""
        if key is None:
            return value
        size = sum(t.numel() * t.element_size() for t in _tensors(value))
        if self.nbytes + size <= self.budget:
            self.entries[key] = value
            self.nbytes += size
        return value

    def cached(self, model: Any, args: Sequence[Any], what: Hashable, compute: Callable[[], Any],
               keep_if: Callable[[Any], bool] = lambda value: True) -> Any:
        """``compute()``'s value for ``what`` of ``model`` on ``args``: the kept one when the memo
        holds it (:meth:`key`), else computed, and kept when ``keep_if(value)``."""
        key = self.key(model, args, what)
        found, value = self.lookup(key)
        if found:
            return value
        value = compute()
        return self.keep(key, value) if key is not None and keep_if(value) else value

    def module(self, key: Optional[Hashable], build: Callable[[], torch.nn.Module]) -> torch.nn.Module:
        """A reference model as ``build()`` makes it. With the memo on and a ``key`` (how it is built:
        :data:`BUILD_ATTR`'s description), the first build under ``key`` is kept as a template (its
        parameters' and buffers' bytes within the budget) and every call, the first included, gets a
        deep copy of it: the same parameter values without drawing them again (a native CUDA
        candidate's parameters come from a reference model built per trial; the reference
        ``Model.__init__``'s draws on the CPU were 16 % of conv_relu_maxpool v4's protocol time on an
        H100, session 30, py-spy), and no caller ever holds the template itself (a kernel that
        writes into its weight arguments changes its own copy). Who may see it: as for the outputs
        (module docstring), the memo is off for a job in a fresh worker, and emptied. A model that
        ``copy.deepcopy`` refuses is not kept (``build()`` per call)."""
        if not self.enabled or key is None:
            return build()
        key = (MODULE_KEY, key)
        template = self.entries.get(key)
        if template is not None:
            return copy.deepcopy(template)
        model = build()
        size = sum(t.numel() * t.element_size() for t in _tensors(model))
        if self.nbytes + size > self.budget:
            return model  # not kept: no one else holds it
        try:
            copied = copy.deepcopy(model)
        except Exception:  # noqa: BLE001 -- a model deepcopy cannot copy: not kept, built per call
            return model
        self.entries[key] = model
        self.nbytes += size
        return copied

    def device_bytes(self) -> int:
        """Bytes the memo holds on a GPU (peak-memory figures leave them out)."""
        return sum(t.numel() * t.element_size() for v in self.entries.values() for t in _tensors(v)
                   if t.device.type == "cuda")


class LazyReference:
    """A reference model built on first use: ``build()`` makes it (once), every attribute and call
    goes to it. With the memo on, a later job's trials find the reference's outputs kept and
    never need the model (its construction draws the parameters on the CPU: about half of the
    per-trial builds' time on the H200, session 12). Carries :data:`BUILD_ATTR` itself, so the
    memo's key needs no build. :func:`resolve` gives the module."""

    def __init__(self, build: Callable[[], torch.nn.Module], key: Hashable):
        self._build, self._module = build, None
        setattr(self, BUILD_ATTR, key)

    @property
    def module(self) -> torch.nn.Module:
        if self._module is None:
            self._module = self._build()
            setattr(self._module, BUILD_ATTR, getattr(self, BUILD_ATTR))
        return self._module

    @property
    def built(self) -> bool:
        return self._module is not None

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.module, name)


def resolve(model: Any) -> Any:
    """The module of a :class:`LazyReference` (built now), anything else unchanged."""
    return model.module if isinstance(model, LazyReference) else model


#: The worker's memo (one per process; :func:`kernelsynth.jobs.evaluate` begins it per job).
MEMO = ReferenceMemo()
