"""Rule 23's per-trial sums (:func:`kernelsynth.verify.precision.trial_sums`) in three Triton passes
over the output instead of about a hundred PyTorch operations.

Why: :func:`~kernelsynth.verify.precision.trial_sums` builds its masks and float64 error tensors one
PyTorch operation at a time -- for one output with two honest outputs, about 120 elementwise passes
over float64 and boolean tensors and as many launches. On a GPU that is the larger part of a trial's
host time on small shapes (a launch each) and of its device time on large ones (a derived
conv_relu_maxpool shape of 2^24 outputs reads and writes about 30 GB through them). Here the same
numbers come from three kernels, each reading its operands once:

* pass A: ``smax``, the largest finite rounding scale (the scale floor ``smax * 2^-30`` needs it);
* pass B: the candidate's and each honest output's ``sum e^2`` and kept counts, the honest errors in
  the tail's units (``sum (e f)^2``), and for a linear map the magnitude sums;
* pass C: with the tail threshold (from pass B's totals by a few PyTorch operations on the device,
  or given), the tail counts, the lower-format counts (with the honest outputs' and ``low_exclude``'s elements left
  out) and the relative tail;

each program writes its partial sums into one row of a float64 buffer, summed over the rows by
PyTorch (a fixed order: the same bits on every call), and everything is read back with one device
synchronisation. Counts are exact (float64 sums of 0/1 below 2^53); sums agree with the PyTorch
path to rounding (another summation order). The definitions are those of ``trial_sums`` and
:class:`~kernelsynth.verify.precision._Scaled`, element by element; ``tests/test_fused_sums.py``
checks every field against the PyTorch path on the interpreter, with non-finite values, empty
groups, zero and tiny scales, every option.

Used on CUDA tensors (:func:`~kernelsynth.verify.precision.trial_sums` decides; ``KERNELSYNTH_FUSED_SUMS=0``
in the environment turns it off, :func:`enabled`); the parent's audit and the CPU path keep the PyTorch
operations (on the interpreter these kernels run, correctly, but
slower than PyTorch's vectorised CPU operations).
"""

import os
from typing import Optional, Sequence

import torch
import triton
import triton.language as tl

#: elements per program
BLOCK = 1024
#: the columns of pass B's partial sums: candidate sum e^2 and count; per honest output (at most 2)
#: sum e^2, count, sum (e f)^2; the magnitude's sum and count
_B_COLS = 2 + 3 * 2 + 2
#: the columns of pass C's: candidate tail, low, normal, ref_low, ref_normal; per honest output its
#: tail; the relative tail's (count, n) of the candidate and each honest output
_C_COLS = 5 + 2 + 2 * 3


@triton.jit
def _finite(x):
    return (x == x) & (tl.abs(x) < float("inf"))


@triton.jit
def _pass_a(S, P, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(S + offs, mask=m, other=0.0).to(tl.float64)
    s = tl.where(m & _finite(s), s, 0.0)
    tl.store(P + tl.program_id(0), tl.max(s, axis=0))


@triton.jit
def _scaled(R, S, smax_ptr, offs, m):
    """What every pass needs of one block: r, s (float64), base, the divisor."""
    r = tl.load(R + offs, mask=m, other=0.0).to(tl.float64)
    s = tl.load(S + offs, mask=m, other=0.0).to(tl.float64)
    smax = tl.load(smax_ptr)
    base = m & _finite(r) & _finite(s) & (s > smax * 9.313225746154785e-10) & (s > 0.0)
    return r, s, base, tl.where(base, s, 1.0)


@triton.jit
def _honest_b(H, offs, m, r, base, div, f):
    h = tl.load(H + offs, mask=m, other=0.0).to(tl.float64)
    keep = base & _finite(h)
    e = tl.where(keep, (h - r) / div, 0.0)
    ef = e * f
    return tl.sum(e * e, axis=0), tl.sum(keep.to(tl.float64), axis=0), tl.sum(ef * ef, axis=0)


@triton.jit
def _pass_b(O, R, S, H1, H2, smax_ptr, P, n, NH: tl.constexpr, LINEAR: tl.constexpr, COLS: tl.constexpr,
            BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    r, s, base, div = _scaled(R, S, smax_ptr, offs, m)
    o = tl.load(O + offs, mask=m, other=0.0).to(tl.float64)
    keep = base & _finite(o)
    e = tl.where(keep, (o - r) / div, 0.0)
    rabs = tl.where(_finite(r), tl.abs(r), 0.0)
    # the tail factor s / max(s, |r|) where the candidate's output is kept (trial_sums' _factor; the
    # honest errors are taken in the same units, with the candidate's mask, as there)
    f = tl.where(keep, s / tl.maximum(s, rabs), 1.0)
    row = P + pid * COLS
    tl.store(row + 0, tl.sum(e * e, axis=0))
    tl.store(row + 1, tl.sum(keep.to(tl.float64), axis=0))
    if NH >= 1:
        a, b, c = _honest_b(H1, offs, m, r, base, div, f)
        tl.store(row + 2, a)
        tl.store(row + 3, b)
        tl.store(row + 4, c)
    if NH >= 2:
        a, b, c = _honest_b(H2, offs, m, r, base, div, f)
        tl.store(row + 5, a)
        tl.store(row + 6, b)
        tl.store(row + 7, c)
    if LINEAR:
        ratio = tl.where(base, tl.maximum(rabs / div, 1.0), 0.0)
        tl.store(row + 8, tl.sum(ratio * ratio, axis=0))
        tl.store(row + 9, tl.sum(base.to(tl.float64), axis=0))


@triton.jit
def _low_bits(x, LOW_MASK: tl.constexpr, INT: tl.constexpr, EXP: tl.constexpr):
    """(low, normal) of a float32/float64 block: finite and normal (|x| at least the smallest normal:
    a nonzero exponent field, EXP), and of those the ones whose low mantissa bits (LOW_MASK) are zero
    (precision._low_bits_mask)."""
    bits = x.to(INT, bitcast=True)
    normal = _finite(x) & ((bits & EXP) != 0)
    return normal & ((bits & LOW_MASK) == 0), normal


@triton.jit
def _rel(d, fin, judged, bar):
    mask = judged & fin
    return tl.sum((mask & (tl.abs(d) > bar)).to(tl.float64), axis=0), tl.sum(mask.to(tl.float64), axis=0)


@triton.jit
def _pass_c(O, R, S, H1, H2, X, smax_ptr, thr_ptr, consts, P, n, NH: tl.constexpr, LINEAR: tl.constexpr,
            HAS_X: tl.constexpr, LOW: tl.constexpr, LOW_MASK: tl.constexpr, INT: tl.constexpr,
            EXP: tl.constexpr, REL: tl.constexpr, TAIL_K: tl.constexpr, COLS: tl.constexpr,
            BLOCK: tl.constexpr):
    # consts: float64 [R, acc] (a Python float argument would be float32)
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    r, s, base, div = _scaled(R, S, smax_ptr, offs, m)
    thr = tl.load(thr_ptr)
    o_raw = tl.load(O + offs, mask=m, other=0.0)
    o = o_raw.to(tl.float64)
    fin_o = _finite(o)
    keep = base & fin_o
    e = tl.where(keep, (o - r) / div, 0.0)
    rabs = tl.where(_finite(r), tl.abs(r), 0.0)
    f = tl.where(keep, s / tl.maximum(s, rabs), 1.0)
    row = P + pid * COLS
    tl.store(row + 0, tl.sum((tl.abs(e * f) > thr).to(tl.float64), axis=0))
    if REL:
        rel_r = tl.load(consts)
        acc = tl.load(consts + 1)
        judged = m & _finite(r) & (tl.abs(r) >= 7.888609052210118e-31)  # RELATIVE_FLOOR, 2^-100
        if LINEAR:  # a sum errs by u times its partial sums, of the size of max(s, |y|)
            bar = tl.abs(r) * rel_r + (TAIL_K * acc) * tl.maximum(tl.where(base, s, 0.0), tl.abs(r))
        else:
            bar = tl.abs(r) * (rel_r + TAIL_K * acc)
        a, b = _rel(o - r, fin_o, judged, bar)
        tl.store(row + 7, a)
        tl.store(row + 8, b)
    if LOW:
        low, normal = _low_bits(o_raw, LOW_MASK, INT, EXP)
        low = low & m
        normal = normal & m
        if HAS_X:
            low = low & (tl.load(X + offs, mask=m, other=0) == 0)
    if NH >= 1:
        h1_raw = tl.load(H1 + offs, mask=m, other=0.0)
        h1 = h1_raw.to(tl.float64)
        k1 = base & _finite(h1)
        e1 = tl.where(k1, (h1 - r) / div, 0.0)
        tl.store(row + 5, tl.sum((tl.abs(e1 * f) > thr).to(tl.float64), axis=0))
        if REL:
            a, b = _rel(h1 - r, _finite(h1), judged, bar)
            tl.store(row + 9, a)
            tl.store(row + 10, b)
        if LOW:
            hl, _ = _low_bits(h1_raw, LOW_MASK, INT, EXP)
            low = low & ~hl
    if NH >= 2:
        h2_raw = tl.load(H2 + offs, mask=m, other=0.0)
        h2 = h2_raw.to(tl.float64)
        k2 = base & _finite(h2)
        e2 = tl.where(k2, (h2 - r) / div, 0.0)
        tl.store(row + 6, tl.sum((tl.abs(e2 * f) > thr).to(tl.float64), axis=0))
        if REL:
            a, b = _rel(h2 - r, _finite(h2), judged, bar)
            tl.store(row + 11, a)
            tl.store(row + 12, b)
        if LOW:
            hl, _ = _low_bits(h2_raw, LOW_MASK, INT, EXP)
            low = low & ~hl
    if LOW:
        tl.store(row + 1, tl.sum(low.to(tl.float64), axis=0))
        tl.store(row + 2, tl.sum(normal.to(tl.float64), axis=0))
        if NH >= 1:  # the reference rounded to the output dtype, every element counted
            rl, rn = _low_bits(tl.load(R + offs, mask=m, other=0.0).to(O.dtype.element_ty), LOW_MASK, INT, EXP)
            tl.store(row + 3, tl.sum((rl & m).to(tl.float64), axis=0))
            tl.store(row + 4, tl.sum((rn & m).to(tl.float64), axis=0))


#: the dtypes the kernels load
_FLOATS = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
#: the lower formats of :data:`kernelsynth.verify.precision.LOWER_FORMAT_BITS`, for the kernels:
#: (low-bit mask, integer type of the bitcast, the exponent field's mask)
_LOW = {torch.float32: ((1 << 13) - 1, tl.int32, 0x7F800000),
        torch.float64: ((1 << 29) - 1, tl.int64, 0x7FF0000000000000)}


def enabled() -> bool:
    """False when the environment sets ``KERNELSYNTH_FUSED_SUMS=0``: the PyTorch operations on the GPU
    too (to compare the two paths' numbers and cost: ``bench/fused_sums_check.py``)."""
    return os.environ.get("KERNELSYNTH_FUSED_SUMS", "1") != "0"


def supported(out: torch.Tensor, ref64: torch.Tensor, scale: torch.Tensor, honest: Sequence[torch.Tensor],
              low_exclude: Optional[torch.Tensor]) -> bool:
    """Whether :func:`fused_trial_sums` takes these operands: one CUDA device, equal shapes, at most two
    honest outputs of the output's dtype, floating dtypes the kernels load."""
    dev = ref64.device
    if not enabled():
        return False
    ts = [out, scale, *honest] + ([low_exclude] if low_exclude is not None else [])
    return (dev.type == "cuda" and ref64.dtype == torch.float64 and len(honest) <= 2
            and all(isinstance(t, torch.Tensor) and t.device == dev and t.shape == ref64.shape for t in ts)
            and out.dtype in _FLOATS and scale.dtype in _FLOATS and all(h.dtype == out.dtype for h in honest)
            and ref64.numel() > 0)


def fused_trial_sums(out: torch.Tensor, ref64: torch.Tensor, scale: torch.Tensor, honest: Sequence[torch.Tensor],
                     threshold: Optional[float], slack: float, linear: bool, room: float,
                     relative: Optional[float], low_exclude: Optional[torch.Tensor], tail_k: float,
                     max_reduction: float) -> dict:
    """:func:`~kernelsynth.verify.precision.trial_sums`'s dictionary for operands that
    :func:`supported` accepts (its arguments, plus the module constants ``tail_k`` = TAIL_K and
    ``max_reduction`` = MAX_REDUCTION passed in). One device synchronisation."""
    n = ref64.numel()
    dev = ref64.device
    T = torch._C.TensorBase  # the C methods: an output's own attributes cannot answer (precision._T)
    o, r, s = (T.reshape(T.contiguous(t), (-1,)) for t in (out, ref64, scale))
    hs = [T.reshape(T.contiguous(h), (-1,)) for h in honest]
    h1 = hs[0] if hs else o
    h2 = hs[1] if len(hs) > 1 else o
    grid = (triton.cdiv(n, BLOCK),)
    rows = grid[0]
    pa = torch.empty(rows, dtype=torch.float64, device=dev)
    _pass_a[grid](s, pa, n, BLOCK=BLOCK)
    smax = pa.amax().reshape(1)
    pb = torch.zeros(rows, _B_COLS, dtype=torch.float64, device=dev)
    _pass_b[grid](o, r, s, h1, h2, smax, pb, n, NH=len(hs), LINEAR=bool(linear), COLS=_B_COLS, BLOCK=BLOCK)
    b = pb.sum(dim=0)
    # the tail threshold on the device: TAIL_K (room * the largest honest RMS in the tail's units + the
    # slack, times the magnitude for a linear map), or the given one (the parent's audit)
    if linear:
        mag = torch.where(b[9] > 0, (b[8] / b[9].clamp(min=1)).sqrt().clamp(max=max_reduction ** 0.5),
                          torch.ones((), dtype=torch.float64, device=dev))
    else:
        mag = torch.ones((), dtype=torch.float64, device=dev)
    slack_t = mag * slack
    if threshold is not None:
        thr = torch.full((1,), float(threshold), dtype=torch.float64, device=dev)
    elif hs:
        rms = torch.stack([(b[4 + 3 * i] / b[3 + 3 * i].clamp(min=1)).sqrt() for i in range(len(hs))]).amax()
        thr = (tail_k * (room * rms + slack_t)).reshape(1)
    else:
        thr = (tail_k * slack_t).reshape(1)
    low = _LOW.get(out.dtype)
    x = T.reshape(T.contiguous(low_exclude), (-1,)).to(torch.uint8) if low_exclude is not None else o
    pc = torch.zeros(rows, _C_COLS, dtype=torch.float64, device=dev)
    consts = torch.full((2,), float(relative or 0.0), dtype=torch.float64, device=dev)  # fills: no host copy
    consts[1:].fill_(float(slack))
    _pass_c[grid](o, r, s, h1, h2, x, smax, thr, consts, pc, n, NH=len(hs),
                  LINEAR=bool(linear), HAS_X=low_exclude is not None, LOW=low is not None,
                  LOW_MASK=low[0] if low else 0, INT=low[1] if low else tl.int32, EXP=low[2] if low else 0,
                  REL=relative is not None, TAIL_K=float(tail_k), COLS=_C_COLS, BLOCK=BLOCK)
    c = pc.sum(dim=0)
    v = torch.cat([b, c, slack_t.reshape(1), thr]).tolist()  # one device sync
    b, c, slack_v, thr_v = v[:_B_COLS], v[_B_COLS:_B_COLS + _C_COLS], v[-2], v[-1]
    ci = [int(x) for x in c]
    nh = len(hs)
    honest_sums = [(b[2 + 3 * i], int(b[3 + 3 * i])) for i in range(nh)]
    rel = None
    if relative is not None:
        rel = [(ci[7], ci[8])] + [(ci[9 + 2 * i], ci[10 + 2 * i]) for i in range(nh)]
    return {"slack": slack_v if linear else slack, "candidate": (b[0], int(b[1])), "tail": (ci[0], int(b[1])),
            "low": (ci[1], ci[2]), "ref_low": (ci[3], ci[4]) if nh else (0, 0), "threshold": thr_v,
            "honest": honest_sums, "honest_tail": [(ci[5 + i], honest_sums[i][1]) for i in range(nh)],
            "rel": rel[0] if rel else None, "honest_rel": rel[1:] if rel else [], "rel_threshold": relative}


@triton.jit
def _compare(O, R, tols, P, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    o = tl.load(O + offs, mask=m, other=0.0).to(tl.float64)
    r = tl.load(R + offs, mask=m, other=0.0).to(tl.float64)
    atol = tl.load(tols)
    rtol = tl.load(tols + 1)
    finite, o_finite = _finite(r), _finite(o)
    o_nan, r_nan = o != o, r != r
    o_inf, r_inf = tl.abs(o) == float("inf"), tl.abs(r) == float("inf")
    nan_bad = m & ((o_nan & finite) | (r_nan & o_finite))
    inf_bad = m & ((o_inf & finite) | (r_inf & o_finite) | (o_inf & r_inf & ((o > 0) != (r > 0))))
    oo = tl.where(finite & m, o, 0.0)
    rr = tl.where(finite & m, r, 0.0)
    err = tl.abs(oo - rr)
    bad = m & (err > atol + rtol * tl.abs(rr))
    row = P + pid * 5
    tl.store(row + 0, tl.max(nan_bad.to(tl.float64), axis=0))
    tl.store(row + 1, tl.max(inf_bad.to(tl.float64), axis=0))
    tl.store(row + 2, tl.max(bad.to(tl.float64), axis=0))
    tl.store(row + 3, tl.max(tl.abs(rr), axis=0))
    tl.store(row + 4, tl.max(tl.where(m, err, 0.0), axis=0))


def fused_compare(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float):
    """``[nan_bad, inf_bad, bad, max |ref|, max |out - ref|]`` of
    :func:`kernelsynth.verify.comparison.compare`'s ``allclose`` rule (rule 6 and the tolerance; the
    flags as 0.0/1.0, the maxima over the elements where the reference is finite) in one pass and one
    device synchronisation, for an output and reference of equal shape on one CUDA device; None for
    anything else (the caller keeps its PyTorch operations). Maxima do not depend on the order: the
    same bits as PyTorch's."""
    if not (enabled() and ref.device.type == "cuda" and out.device == ref.device and out.shape == ref.shape
            and out.dtype in _FLOATS and ref.dtype in _FLOATS and ref.numel() > 0):
        return None
    return compare_flags(out, ref, atol, rtol)


def compare_flags(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float):
    """:func:`fused_compare`'s pass on any device Triton runs on (the interpreter: CPU tensors), for
    equal shapes and at least one element."""
    T = torch._C.TensorBase
    o, r = (T.reshape(T.contiguous(t), (-1,)) for t in (out, ref))
    n = r.numel()
    grid = (triton.cdiv(n, BLOCK),)
    tols = torch.full((2,), float(atol), dtype=torch.float64, device=ref.device)  # fills: no host copy
    tols[1:].fill_(float(rtol))
    p = torch.empty(grid[0], 5, dtype=torch.float64, device=ref.device)
    _compare[grid](o, r, tols, p, n, BLOCK=BLOCK)
    return p.amax(dim=0).tolist()


@triton.jit
def _hash_pass(W, P, n, M1, M2, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    w = tl.load(W + offs, mask=m, other=0).to(tl.int64)  # sign-extended, as ``Tensor.to(torch.int64)``
    k = offs * M1 + M2  # int64 products and sums wrap modulo 2^64, as torch's
    k = k ^ (k >> 31)  # arithmetic shift, as torch's ``>>`` on int64
    tl.store(P + 2 * tl.program_id(0), tl.sum(tl.where(m, w * (k | 1), 0), axis=0))
    tl.store(P + 2 * tl.program_id(0) + 1, tl.sum(tl.where(m, w ^ (k * M2), 0), axis=0))


def fused_hash(words: torch.Tensor, m1: int, m2: int) -> torch.Tensor:
    """:func:`kernelsynth.verify.refmemo._hash` of a 1-D CUDA tensor of integer ``words`` (one per
    element: the bits viewed as the int type of the element's size) in one Triton pass: each
    program's two int64 sums over its elements, summed by PyTorch. The same two int64 values as the
    PyTorch operations (every step is an int64 product, sum or bit operation, exact modulo 2^64 in
    any order): ``tests/test_fused_sums.py`` on the interpreter, ``bench/fused_sums_check.py`` on a
    GPU. ``m1``/``m2``: the position hash's odd multipliers (signed int64 values)."""
    n = words.numel()
    rows = triton.cdiv(n, BLOCK)
    p = torch.empty(rows, 2, dtype=torch.int64, device=words.device)
    _hash_pass[(rows,)](words, p, n, m1, m2, BLOCK=BLOCK)
    return p.sum(dim=0)
