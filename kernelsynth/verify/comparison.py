"""Output comparison (VERIFICATION.md rules 3-7, 9, 10): type, shape, dtype (exactly the reference's
at the dtype under test, for ``exact`` and ``allclose`` alike), device, layout and
values against the reference; inputs untouched; no storage shared with an input or an earlier
output; two outputs of one input agree. Used in a worker and by the parent's independent check
(CPU tensors there)."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import torch

from .failures import VerificationFailure


#: The C classes whose methods the checks call directly (``_T.view(t, ...)``, ``_S.data_ptr(st)``): a
#: tensor or storage object can carry instance attributes, and one named ``view``, ``contiguous``,
#: ``numel`` or ``data_ptr`` would answer a plain method call. The candidate's output is refused for them
#: (:func:`shadowed_attributes`), but an earlier output, an input or a storage object can gain them later
#: from candidate code (session 15, an attack on the first version of that check: lies planted on the
#: previous output during the next call, and a storage whose ``data_ptr`` answered two addresses).
_T, _S = torch._C.TensorBase, torch._C.StorageBase


def _bits(t: torch.Tensor) -> torch.Tensor:
    """A view of ``t``'s bits as integers, so NaN payloads and -0.0 compare exactly."""
    if t.dtype.is_floating_point:
        return _T.view(t, {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.int8}[_T.element_size(t)])
    return t


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True if the byte ranges of the two tensors' storages overlap."""
    if a.device != b.device or _T.numel(a) == 0 or _T.numel(b) == 0:
        return False
    sa, sb = _T.untyped_storage(a), _T.untyped_storage(b)
    a0, b0 = _S.data_ptr(sa), _S.data_ptr(sb)
    return a0 < b0 + _S.nbytes(sb) and b0 < a0 + _S.nbytes(sa)


def describe_mismatch(out: torch.Tensor, ref: torch.Tensor, bad: torch.Tensor) -> str:
    """``"<n> of <total> elements differ; first at <index>: got <value>, expected <value>"``; when the
    two values print alike (NaNs of different payloads, as torch.gather's CPU kernel gives for a
    bfloat16 NaN), their bits in hex follow each (``got nan (0xffff), expected nan (0x7f81)``)."""
    n_bad = int(bad.sum())
    idx = tuple(int(i) for i in bad.nonzero()[0])
    got, want = out[idx].item(), ref[idx].item()
    text = f"got {got!r}, expected {want!r}"
    if repr(got) == repr(want) and out.dtype == ref.dtype and out.dtype.is_floating_point:
        width = 2 * _T.element_size(out)
        g, w = (int(_bits(t[idx].reshape(1))[0]) & ((1 << (4 * width)) - 1) for t in (out, ref))
        text = f"got {got!r} (0x{g:0{width}x}), expected {want!r} (0x{w:0{width}x})"
    return f"{n_bad} of {bad.numel()} elements differ; first at {idx}: {text}"


def autograd_mismatch(requires_grad: bool, has_grad_fn: bool, ref_requires_grad: bool = False,
                      ref_has_grad_fn: bool = False) -> Optional[str]:
    """Why an output's autograd state (``requires_grad``, whether it has a ``grad_fn``) is not the
    reference's, or None. The reference runs under ``torch.no_grad()``, so its output is a plain
    tensor: neither flag. An output returned with ``requires_grad=True`` (a leaf made with
    ``requires_grad_()``) or with a ``grad_fn`` (a graph recorded under ``torch.enable_grad()``)
    breaks its caller: ``y += 1`` raises on such a leaf, ``y.numpy()`` raises, and every later op
    records a graph (tests/adversarial/redteam_s10 fg1). Used by :func:`layout_mismatch` in the
    worker and by the parent's audit on the flags of a digest (:func:`kernelsynth.verify.transport.digest`)."""
    if requires_grad != ref_requires_grad:
        return (f"the output has requires_grad={requires_grad}, the reference's {ref_requires_grad} (it runs "
                "under torch.no_grad()): a caller cannot update it in place or read it as an array (autograd rule)")
    if has_grad_fn and not ref_has_grad_fn:
        return "the output carries an autograd graph (a grad_fn); the reference's has none (autograd rule)"
    return None


def shadowed_attributes(out: torch.Tensor) -> list:
    """The names in ``out``'s instance dictionary that are attributes of ``torch.Tensor`` (sorted).
    An instance attribute wins over the class's methods in attribute lookup, so an output of exactly
    type ``torch.Tensor`` whose ``is_contiguous``, ``stride``, ``double`` or ``detach`` is its own
    function answers every caller -- and every check that asks it through them -- with whatever that
    function says (tests/adversarial/redteam_s15 dw_d1: an NHWC buffer returned as an NCHW view whose
    ``is_contiguous`` answers True). The dictionary itself is read through ``vars``: ``__dict__`` is a
    data descriptor of the type, which an instance cannot shadow, and the type's own attributes are
    guarded (VERIFICATION.md rule 13); its keys through ``dict.keys``, since ``__dict__`` may be
    assigned a dict subclass whose ``__iter__``/``__len__``/``keys`` hide them while attribute lookup
    still finds them. A key that is not exactly a ``str`` is reported as ``<type key>``: with a
    ``__hash__`` and ``__eq__`` that match a name, attribute lookup finds it too. An honest output has
    none (``rule 3``, layout)."""
    own = vars(out)  # read through dict's own methods: a dict subclass assigned to ``__dict__`` can hide its keys
    # a key that is not exactly a str can still answer an attribute lookup (its __hash__ and __eq__ match the name)
    return sorted(k if type(k) is str else f"<{type(k).__name__} key>" for k in dict.keys(own)
                  if type(k) is not str or hasattr(torch.Tensor, k))


def layout_mismatch(out: torch.Tensor, ref: torch.Tensor, strides: Optional[Sequence[int]] = None) -> Optional[str]:
    """Why ``out``'s memory layout is not the reference's, or None.

    A contiguous reference output requires a contiguous output; otherwise the strides must be
    the reference's. ``strides``: the strides of the reference's own output at the dtype under
    test on this device (None: not known), accepted too -- the float64 reference can take another
    path than the job dtype's (PyTorch's SDPA: float64 runs the math path, contiguous; float32 on
    a GPU the memory-efficient kernel, whose output of shape (B, H, S, D) is laid out as
    (B, S, H, D): the eager and torch.compile baselines of causal_attention were rejected for it,
    session 26, H100). Dimensions of size 1 are ignored (their stride is never used). The autograd
    state must be the reference's (:func:`autograd_mismatch`). A
    column-major or strided output with the right values breaks every caller that reads the
    storage (``.data_ptr()``, a next kernel, ``.view``), so it is a wrong output.
    """
    for flag, what in (("is_neg", "a negative-bit view"), ("is_conj", "a conjugate-bit view")):
        if getattr(_T, flag)(out) and not getattr(ref, flag)():
            # its memory holds -y (or conj y) and reads as y only through torch's lazy view bit: a
            # kernel writes the values it returns (tests/adversarial/redteam_s7 fd1)
            return f"the output is {what} (torch._neg_view/conj): its memory does not hold its values (layout rule)"
    autograd = autograd_mismatch(out.requires_grad, out.grad_fn is not None, ref.requires_grad, ref.grad_fn is not None)
    if autograd:
        return autograd
    if _T.is_inference(out) and not ref.is_inference():
        # made under torch.inference_mode(): outside it the tensor cannot be updated in place or saved
        # for backward by the next layer (tests/adversarial/redteam_s8 flip fd1)
        return ("the output is an inference tensor (made under torch.inference_mode()): it cannot be "
                "updated in place or saved for backward outside inference mode (layout rule)")
    if strides is not None and len(strides) == ref.dim() and \
            all(so == sr for so, sr, n in zip(_T.stride(out), strides, ref.shape) if n > 1):
        return None  # the reference's own layout at the dtype under test
    also = "" if strides is None else f" or, at the dtype under test, {tuple(strides)}"
    if ref.is_contiguous():
        if _T.is_contiguous(out):
            return None
        return (f"output strides {tuple(_T.stride(out))} are not contiguous; the reference's are "
                f"{tuple(ref.stride())}{also} (layout rule)")
    same = all(so == sr for so, sr, n in zip(_T.stride(out), ref.stride(), ref.shape) if n > 1)
    return None if same else (f"output strides {tuple(_T.stride(out))}, expected the reference's "
                              f"{tuple(ref.stride())}{also} (layout rule)")


def compare(out, ref: torch.Tensor, comparison: str, tol: Optional[Dict[str, float]],
            dtype: Optional[torch.dtype] = None, strides: Optional[Sequence[int]] = None) -> Dict[str, float]:
    """Compare one output with the reference output. Returns ``{"max_abs_err", "max_rel_err"}``
    (floats; ``max_rel_err`` is the largest absolute error over the largest finite ``|ref|``).

    ``out``: whatever the candidate returned. ``ref``: the reference output, in the output dtype
    (``exact``) or in float64 (``allclose``). ``tol``: ``{"atol", "rtol"}`` (``allclose`` only).
    ``dtype``: the output dtype the reference has when run at the dtype under test (``exact``:
    ``ref.dtype`` when None; ``allclose``: required, since ``ref`` is float64 -- ValueError).
    ``strides``: the strides of that output, a layout accepted besides ``ref``'s
    (:func:`layout_mismatch`; None: ``ref``'s rule alone).
    Checks, in order: exact type ``torch.Tensor``, no instance attribute shadowing a ``torch.Tensor``
    attribute (:func:`shadowed_attributes`), shape, dtype, device type,
    layout (:func:`layout_mismatch`), then the values. Raises VerificationFailure with the reason.
    """
    if type(out) is not torch.Tensor:
        raise VerificationFailure(f"output is {type(out).__module__}.{type(out).__qualname__}, "
                                  "expected exactly torch.Tensor")
    shadowed = shadowed_attributes(out)
    if shadowed:
        raise VerificationFailure(f"the output's own attributes {', '.join(shadowed[:6])} shadow torch.Tensor's: "
                                  "what a caller (and this check) reads of it through them is not what its memory "
                                  "holds (layout rule)")
    if out.shape != ref.shape:
        raise VerificationFailure(f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
    expected_dtype = dtype if dtype is not None else (ref.dtype if comparison == "exact" else None)
    if expected_dtype is None:
        raise ValueError("compare: the expected output dtype is required for allclose (the reference is float64)")
    if out.dtype != expected_dtype:
        raise VerificationFailure(f"output dtype {out.dtype}, expected {expected_dtype} (the reference's at the "
                                  "dtype under test)")
    if out.device.type != ref.device.type:
        raise VerificationFailure(f"output on {out.device}, expected {ref.device}")
    layout = layout_mismatch(out, ref, strides)
    if layout:
        raise VerificationFailure(layout)
    if comparison == "exact":
        bad = _bits(_T.contiguous(out)) != _bits(ref.contiguous())
        if bool(bad.any()):
            raise VerificationFailure("not bit-exact: " + describe_mismatch(out, ref, bad))
        return {"max_abs_err": 0.0, "max_rel_err": 0.0}
    if ref.device.type == "cuda":  # one Triton pass and one sync (kernelsynth.verify.fused_sums); a failure
        from .fused_sums import fused_compare  # is described by the PyTorch operations below
        got = fused_compare(out, ref, tol["atol"], tol["rtol"])
        if got is not None and not any(got[:3]):
            scale, max_abs = got[3], got[4]
            return {"max_abs_err": max_abs, "max_rel_err": max_abs / scale if scale > 0 else max_abs}
    o0, r0 = _T.double(out), ref.double()
    # Rule 6: non-finite exactly where the reference is non-finite. Where both are non-finite, NaN
    # and Inf may stand for each other (algebraically equal forms differ there: y dy - y d gives
    # inf - inf = NaN where y (dy - d) gives -Inf for a planted y = +Inf; redteam_s15 sb_h1 on the
    # H200, session 21), but two infinities must have the same sign.
    finite, o_finite = torch.isfinite(r0), torch.isfinite(o0)
    nan_bad = (torch.isnan(o0) & finite) | (torch.isnan(r0) & o_finite)
    inf_bad = (torch.isinf(o0) & finite) | (torch.isinf(r0) & o_finite) | \
        (torch.isinf(o0) & torch.isinf(r0) & ((o0 > 0) != (r0 > 0)))
    o, r = torch.where(finite, o0, 0.0), torch.where(finite, r0, 0.0)
    err = (o - r).abs()
    bad = err > tol["atol"] + tol["rtol"] * r.abs()
    # the three verdicts and two statistics read back together: one host sync, not five
    empty = o.new_zeros(())
    has_nan_bad, has_inf_bad, has_bad, scale, max_abs = torch.stack([
        nan_bad.any().double(), inf_bad.any().double(), bad.any().double(),
        r.abs().max() if r.numel() else empty, err.max() if err.numel() else empty]).tolist()
    if has_nan_bad:  # checked in this order, as each reason names its class
        raise VerificationFailure("NaN where the reference has none (or the reverse): "
                                  + describe_mismatch(o0, r0, nan_bad))
    if has_inf_bad:
        raise VerificationFailure("Inf where the reference has none (or the reverse, or of the other sign): "
                                  + describe_mismatch(o0, r0, inf_bad))
    if has_bad:
        raise VerificationFailure(f"outside atol={tol['atol']}, rtol={tol['rtol']}: " + describe_mismatch(o, r, bad))
    return {"max_abs_err": max_abs, "max_rel_err": max_abs / scale if scale > 0 else max_abs}


def run_reference(ref_model: torch.nn.Module, inputs: Sequence[torch.Tensor], comparison: str,
                  dtype: torch.dtype, memo=None) -> torch.Tensor:
    """The reference output on clones of ``inputs``: in the inputs' dtype for ``exact``, in float64
    (floats upcast) for ``allclose``. ``memo``: a :class:`~kernelsynth.verify.refmemo.ReferenceMemo`
    that may already hold it (kept there when computed; None: always computed)."""
    def compute():
        with torch.no_grad():
            if comparison == "allclose":
                args = [x.double() if x.is_floating_point() else x.clone() for x in inputs]
                return ref_model.double()(*args)
            return ref_model(*[x.clone() for x in inputs])
    if memo is None:
        return compute()
    return memo.cached(ref_model, inputs, ("reference", comparison, str(dtype)), compute,
                       keep_if=lambda out: type(out) is torch.Tensor)


def outputs_agree(a: torch.Tensor, b: torch.Tensor, bound: Optional[Dict[str, float]]) -> bool:
    """True if two outputs of the same input agree: same type, shape and bits (``bound`` None), or
    NaN/Inf at the same places and ``|a - b| <= atol + rtol * |b|`` elsewhere (``bound`` given)."""
    if type(a) is not torch.Tensor or a.shape != b.shape or a.dtype != b.dtype:
        return False
    if bound is None or not a.dtype.is_floating_point:
        return bool((_bits(_T.contiguous(a)) == _bits(_T.contiguous(b))).all())
    x, y = _T.double(a), _T.double(b)
    inf = torch.isinf(y)
    if bool((torch.isnan(x) != torch.isnan(y)).any()) or bool((torch.isinf(x) != inf).any()) \
            or bool((x[inf] != y[inf]).any()):  # Inf of the same sign
        return False
    fin = torch.isfinite(y)
    x, y = torch.where(fin, x, 0.0), torch.where(fin, y, 0.0)
    return bool(((x - y).abs() <= bound["atol"] + bound["rtol"] * y.abs()).all())


def check_inputs_untouched(inputs, pristine, out) -> None:
    """Inputs bitwise unchanged, and the output not aliasing any of them."""
    for i, (x, p) in enumerate(zip(inputs, pristine)):
        if not isinstance(x, torch.Tensor):
            continue
        if x.shape != p.shape or bool((_bits(x) != _bits(p)).any()):
            raise VerificationFailure(f"input {i} was modified by the candidate")
        if isinstance(out, torch.Tensor) and shares_storage(out, x):
            raise VerificationFailure(f"output shares storage with input {i}")


def check_earlier_output(earlier, out) -> None:
    """Raise VerificationFailure when an earlier call's output (``earlier``: the tensor and a
    snapshot of its bits) changed or shares storage with ``out``: an output buffer reused across calls."""
    if earlier is None:
        return
    prev, snapshot = earlier
    shadowed = shadowed_attributes(prev)
    if shadowed:
        raise VerificationFailure(f"an earlier output gained attributes that shadow torch.Tensor's "
                                  f"({', '.join(shadowed[:6])}) after it was returned (layout rule)")
    if (type(out) is torch.Tensor and shares_storage(out, prev)) or \
            not bool(_T.all(_bits(_T.contiguous(prev)) == _bits(_T.contiguous(snapshot)))):
        raise VerificationFailure("an earlier output changed or shares storage with a later one (one output "
                                  "buffer reused across calls): outputs must be fresh tensors")
