"""The GPU's semantics on the Triton interpreter: bfloat16 rounding (VERIFICATION.md rule 22) and
integer arithmetic without overflow checks.

Triton 3.9's interpreter (``triton/runtime/interpreter.py``) converts float32 -> bfloat16 in
``InterpreterBuilder.cast_impl`` with ``_convert_float(..., rounding_mode=None)``, which drops
the low 16 bits (rounds toward zero); its ``rtne`` branch adds the cut-off bit without a carry
into the exponent and without ties-to-even. NVIDIA GPUs round to nearest even (PTX ISA,
``cvt.rn.bf16.f32``; the default of ``tl.float32.to(tl.bfloat16)`` and of ``tl.store`` into a
bfloat16 pointer). It also feeds bfloat16 operands of ``tl.dot`` to ``np.matmul`` as their
uint16 storage (numpy has no bfloat16), so a bfloat16 ``tl.dot`` returns garbage.

:func:`patch_bfloat16_rounding` replaces the two conversions and the dot with ones that round
to nearest even (NaN stays a quiet NaN, as ``torch`` rounds) and compute bfloat16 dots as
float32 products of the exact bfloat16 values. Installed by :mod:`kernelsynth.jobs` in workers
with ``TRITON_INTERPRET=1``; version-guarded: on a Triton without the patched names it does
nothing and says so.

:func:`match_gpu_integer_arithmetic` turns off the interpreter's integer-overflow check. Triton's
interpreter redoes every 32-bit (and narrower) integer ``+``, ``-`` and ``*`` in int64 and compares
it with the type's range (``InterpreterOptions.sanitize_overflow``, default on), but the resulting
``device_assert`` does nothing outside debug mode (``TritonSemantic.device_assert`` returns at once
unless ``options.debug``), so the work changed nothing: integers wrap as in a compiled GPU kernel
either way. It was about 40 % of a flip2d candidate's verification CPU time on the interpreter
(py-spy, session 19: ``TritonSemantic.binary_op_sanitize_overflow_impl``).
"""

from __future__ import annotations

from typing import Optional

#: Triton versions whose interpreter this patch was written against (checked by prefix).
PATCHED_VERSIONS = ("3.9",)


def float32_to_bfloat16_bits(bits):
    """bfloat16 bit patterns (numpy uint16) of float32 values given as their uint32 bits:
    round to nearest, ties to even; NaN -> a quiet NaN with the same sign."""
    import numpy as np

    b = np.asarray(bits, dtype=np.uint32)
    rounded = ((b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    quiet = ((b >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return np.where(nan, quiet, rounded)


def match_gpu_integer_arithmetic() -> Optional[str]:
    """Turn off the interpreter's integer-overflow check (``sanitize_overflow``), whose assertion
    outside debug mode does nothing (integers wrap, as in a compiled GPU kernel). Returns None when
    done, else why not (the interpreter's builder or its options moved)."""
    import dataclasses

    try:
        from triton.runtime import interpreter as interp
        builder = interp.interpreter_builder
        options = builder.options
        builder.options = dataclasses.replace(options, sanitize_overflow=False)
    except (ImportError, AttributeError, TypeError) as e:
        return f"interpreter options not found ({e}); integer overflow still checked"
    return None


def patch_bfloat16_rounding() -> Optional[str]:
    """Install round-to-nearest-even float32 -> bfloat16 conversions and float32 bfloat16 dots
    on Triton's interpreter. Returns None when installed (or already installed), else why not
    (another Triton version, or the interpreter's internals moved)."""
    import numpy as np
    import triton
    import triton.language as tl

    if not triton.__version__.startswith(PATCHED_VERSIONS):
        return f"triton {triton.__version__}: interpreter bfloat16 rounding not patched (written for {PATCHED_VERSIONS})"
    try:
        from triton.runtime import interpreter as interp
        builder = interp.InterpreterBuilder
        handle = interp.TensorHandle
        orig_cast, orig_fp_to_fp, orig_dot = builder.cast_impl, builder.create_fp_to_fp, builder.create_dot
    except (ImportError, AttributeError) as e:
        return f"triton {triton.__version__}: interpreter internals not found ({e}); bfloat16 rounding not patched"
    if getattr(orig_cast, "_kernelsynth_rne", False):
        return None

    def to_bf16(src):
        data = float32_to_bfloat16_bits(np.ascontiguousarray(src.data, dtype=np.float32).view(np.uint32))
        return handle(data.reshape(np.shape(src.data)), tl.bfloat16)

    def bf16_as_f32(data):
        return (np.asarray(data, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)

    def cast_impl(self, src, dst_type):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return to_bf16(src)
        return orig_cast(self, src, dst_type)

    def create_fp_to_fp(self, src, dst_type, rounding_mode):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return to_bf16(src)  # rtne asked for or not: the GPU's rounding
        return orig_fp_to_fp(self, src, dst_type, rounding_mode)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if a.dtype.scalar == tl.bfloat16 or b.dtype.scalar == tl.bfloat16:
            a = handle(bf16_as_f32(a.data), tl.float32) if a.dtype.scalar == tl.bfloat16 else a
            b = handle(bf16_as_f32(b.data), tl.float32) if b.dtype.scalar == tl.bfloat16 else b
        return orig_dot(self, a, b, d, input_precision, max_num_imprecise_acc)

    for fn in (cast_impl, create_fp_to_fp, create_dot):
        fn._kernelsynth_rne = True
    builder.cast_impl, builder.create_fp_to_fp, builder.create_dot = cast_impl, create_fp_to_fp, create_dot
    # create_fp_trunc and get_bf16 are bound to cast_impl through lambdas/calls on self: they follow
    return None
