"""Output transport to the parent (VERIFICATION.md rule 18): what the worker sends of each
audited output (:func:`digest`), how the parent reads it back (:func:`tensor_of`), and the key
that names the trial (:func:`audit_key`). Importing this module does not import torch (the
parent plans audits without it); the functions that handle tensors import it when called."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

#: ``exact`` outputs up to this many bytes travel to the parent whole; larger ones as a checksum
#: (:func:`_checksum`; ``allclose`` outputs always travel whole: a tolerance needs the values). 16 MiB:
#: flip2d's GPU joint shape (5853 x 5541, 124 MiB in float32) sent whole is pickled through the
#: pipe, copied and bit-compared by the parent on the critical path of its job loop (on the H200
#: about 0.6 s per candidate outside the workers appeared with it, BENCHMARKS.md "Session 7"; on a
#: loaded 2-core CPU 4.8 s, bench/audit_transport.py); its checksum is two integers from the device.
DIGEST_MAX_BYTES = 16 * 2**20
#: ``allclose`` outputs of more elements than this travel as :data:`SAMPLE_ELEMENTS` of their
#: elements (:func:`sample_index`): a tolerance needs values, but the float64 references of a GPU
#: plan's largest shapes (2^30 elements: 8 GiB each, plus the rounding scale) cannot all cross the
#: pipe in one message (1 GiB cap, kernelsynth/workers.py). Found on the H200 (session 9): every
#: catalog task's oracle was refused at the timing shape (softmax_rows 8192 x 8192). The worker
#: still compares every element in-process (rules 5 and 23); the parent's independent check
#: (rule 18) of those shapes sees the sample.
SAMPLE_ABOVE_ELEMENTS = 2**21
SAMPLE_ELEMENTS = 2**18
_PRIME = 2147483647  # 2^31 - 1


#: The audit group of the staleness check's first call on an overwritten input (step 2 of
#: :func:`kernelsynth.verify.protocol.check_repeat_and_fresh`), one per listed shape: ``"fresh:<shape index>:0"``.
#: Its precision pools with the listed shapes' (rule 23), as in the worker.
FRESH_GROUP = "fresh"
#: The audit group of the staleness check's later calls (steps 3-5, :func:`kernelsynth.verify.protocol.later_steps`):
#: ``"later:<shape index>:<step>"``, as many per listed shape as the oracle's replay of those steps makes.
#: Their precision pools with the listed shapes' too (session 29).
LATER_GROUP = "later"
#: The audit groups whose precision pools with the listed shapes' (rule 23), as in the worker.
LISTED_POOL = ("listed", FRESH_GROUP, LATER_GROUP)


def audit_key(group: str, si: int, t: int) -> str:
    """The name of one audited trial: ``"<group>:<shape index>:<trial>"`` (``"listed:0:4"``)."""
    return f"{group}:{si}:{t}"


def parse_audit_key(key: str) -> Tuple[str, int, int]:
    """``"listed:0:4"`` -> ``("listed", 0, 4)``: the inverse of :func:`audit_key`."""
    group, si, t = key.split(":")
    return group, int(si), int(t)


#: Elements per chunk of :func:`_checksum` (its int64 temporaries: 128 MiB each).
CHECKSUM_CHUNK = 1 << 24
_MULTS = (2654435761, 40503)


def _checksum(t) -> List[int]:
    """Two position-weighted sums of the bits of ``t`` modulo 2^31-1: element ``j`` of chunk
    ``c`` (:data:`CHECKSUM_CHUNK` elements) weighted by ``w_k(j) * w_k(c)``, ``w_k(i) = (i m_k + k + 1)
    mod (2^31-1) + 1`` (a multiplicative hash, two multipliers): equal for identical bits, equal
    for different bits with probability about 2^-62 (a random error or a permutation, not an
    adversary who knows the weights). The element weights are made once per call and the chunk
    weights on the host, so a chunk costs four elementwise passes and two sums in int64 (about
    108 bytes moved per element of 4 bytes, where weights from each element's flat index took
    about 260: on the H200 the 2^31-element shape's checksum is ~0.2 s of its verify_s at
    ~3 TB/s, VERIFICATION.md "Cost per candidate"); the chunks' sums are read back together
    (one host sync per call: 256 on the 2^31-element shape before, cost11)."""
    import torch

    from .comparison import _bits

    flat = _bits(t.contiguous()).reshape(-1)
    sums = [0, 0]
    step = CHECKSUM_CHUNK
    n = flat.numel()
    j = torch.arange(min(step, n), device=flat.device, dtype=torch.int64)
    weights = [torch.remainder(j * mult + k + 1, _PRIME) + 1 for k, mult in enumerate(_MULTS)]
    del j
    parts = []  # per chunk and multiplier, on the device: read back once (one host sync, not two per chunk)
    for start in range(0, n, step):
        x = flat[start:start + step].to(torch.int64)
        if flat.element_size() > 4:  # 8-byte bits: reduced first, so x * w stays in int64
            x = torch.remainder(x, _PRIME)
        for w in weights:
            parts.append(torch.remainder(x * w[:x.numel()], _PRIME).sum())  # < 2^24 * 2^31: fits int64
    chunks = torch.stack(parts).tolist() if parts else []
    for i, chunk in enumerate(chunks):
        c, k = divmod(i, len(_MULTS))
        sums[k] = (sums[k] + (chunk % _PRIME) * ((c * _MULTS[k] + k + 1) % _PRIME + 1)) % _PRIME
    return sums


def sample_index(numel: int, device=None):
    """The flat (C-order) indices of the :data:`SAMPLE_ELEMENTS` elements audited of an ``allclose``
    output of ``numel`` elements (more than :data:`SAMPLE_ABOVE_ELEMENTS`): one per stratum of
    ``numel // SAMPLE_ELEMENTS`` consecutive elements, at an offset inside it from a
    multiplicative hash of the stratum, plus the last element. Depends on ``numel`` only, so the
    worker and the oracle pick the same elements; int64 on ``device``."""
    import torch

    n = SAMPLE_ELEMENTS
    stride = numel // n
    k = torch.arange(n, device=device, dtype=torch.int64)
    offset = torch.remainder(k * 2654435761 + 40503, _PRIME) % stride
    idx = k * stride + offset
    idx[-1] = numel - 1
    return idx


def audit_view(t, comparison: str = "allclose"):
    """``t`` as the independent check sees it: for ``allclose`` tensors of more than
    :data:`SAMPLE_ABOVE_ELEMENTS` elements the 1-D sample at :func:`sample_index` (C order), else
    ``t`` itself."""
    if comparison != "allclose" or t.numel() <= SAMPLE_ABOVE_ELEMENTS:
        return t
    return t.detach().reshape(-1)[sample_index(t.numel(), t.device)]


def digest(out, comparison: str) -> Dict[str, Any]:
    """What the independent check needs of one output, on the host: ``{"type": name}`` when it
    is not exactly a torch.Tensor; else shape, dtype, ``requires_grad`` and ``grad_fn`` (whether it has
    one: bools), and the tensor's bytes (C order, read back
    with :func:`tensor_of`) or, for ``exact`` outputs above :data:`DIGEST_MAX_BYTES`, :func:`_checksum`,
    or, for ``allclose`` outputs above :data:`SAMPLE_ABOVE_ELEMENTS` elements, the bytes of the
    sample :func:`audit_view` (``"sampled": True``; ``shape`` stays the whole output's)."""
    import torch

    if type(out) is not torch.Tensor:
        return {"type": f"{type(out).__module__}.{type(out).__qualname__}"}
    d: Dict[str, Any] = {"type": "torch.Tensor", "shape": list(out.shape), "dtype": str(out.dtype),
                         # autograd state, which the parent checks against the reference's (rule 3)
                         "requires_grad": bool(out.requires_grad), "grad_fn": out.grad_fn is not None}
    # the bytes are read from a detached alias made by the C method: the output's own instance attributes
    # (a shadowed ``detach``/``contiguous``/``to``: redteam_s15 dw_d1's class) cannot answer for its memory
    data = torch._C.TensorBase.detach(out)
    if comparison == "exact" and data.numel() * data.element_size() > DIGEST_MAX_BYTES:
        d["checksum"] = _checksum(data)
    elif comparison == "allclose" and data.numel() > SAMPLE_ABOVE_ELEMENTS:
        d["sampled"] = True
        d["bytes"] = audit_view(data).to("cpu", copy=True).contiguous().view(torch.uint8).numpy().tobytes()
    else:  # raw bytes, not a tensor: torch's pickling of CPU tensors between processes goes through
        # shared memory that dies with the sending worker (which may exit right after sending)
        d["bytes"] = data.to("cpu", copy=True).contiguous().view(-1).view(torch.uint8).numpy().tobytes()
    from .comparison import shadowed_attributes

    shadowed = shadowed_attributes(out)
    if shadowed:  # the parent's audit refuses it as the worker's rule 3 does (kernelsynth/audit.py)
        d["shadowed"] = shadowed
    return d


def tensor_of(d: Dict[str, Any]):
    """The CPU ``torch.Tensor`` a :func:`digest` carries as ``bytes`` (its shape and dtype; a
    ``sampled`` digest's 1-D sample)."""
    import torch

    dtype = getattr(torch, d["dtype"].removeprefix("torch."))
    flat = torch.frombuffer(bytearray(d["bytes"]), dtype=torch.uint8) if d["bytes"] else torch.empty(0, dtype=torch.uint8)
    return flat.view(dtype) if d.get("sampled") else flat.view(dtype).reshape(d["shape"])
