"""Default tolerances per operator class and dtype, each with its source
(references/VERIFICATION.md, rule 5).

A spec with ``comparison: allclose`` may omit a dtype from its ``tolerance``: the entry is then
taken from :data:`TABLE` by the spec's ``category`` (one of :data:`OP_CLASSES`, or an alias
from :data:`ALIASES`). Data movement is never compared with a tolerance: its kernels do no
arithmetic, so any difference is a bug (``comparison: exact``, bitwise).

The float64 reference (``verify.comparison.run_reference``) is the ground truth, so these bounds are the
error the candidate's own arithmetic may make in the given dtype; ``|out - ref| <= atol + rtol *
|ref|`` element by element, and ``max_rel_err`` (largest absolute error / largest |ref|) is
recorded with every observation.
"""

from __future__ import annotations

from typing import Dict, Optional

#: Operator classes with a default tolerance. ``data_movement`` maps to None: exact comparison.
OP_CLASSES = ("data_movement", "elementwise", "reduction", "matmul")
#: Spec categories that mean one of the classes above.
ALIASES = {"copy": "data_movement", "permute": "data_movement", "pointwise": "elementwise",
           "activation": "elementwise", "normalization": "reduction", "softmax": "reduction", "scan": "reduction",
           "conv": "matmul", "convolution": "matmul", "gemm": "matmul", "attention": "matmul"}

_ASSERT_CLOSE = ("torch.testing.assert_close default for the dtype "
                 "(https://pytorch.org/docs/stable/testing.html)")
_HIGHAM = ("float32 accumulation: Higham's probabilistic bound sqrt(n) * eps for n <= 2^16 terms, "
           "256 * 1.19e-7 = 3.05e-5 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., "
           "sec. 4.2 and 2.8); atol as torch.testing.assert_close")
_LOW_OUT = ("rounding of the output to the dtype dominates when accumulation is in float32: "
            + _ASSERT_CLOSE)
_TF32 = ("TF32 (10-bit mantissa) may be used for float32 matmul/conv: PyTorch's own convolution tests "
         "use @tf32_on_and_off(0.005) (torch/testing/_internal/common_cuda.py), i.e. atol 5e-3; rtol the same")
_KERNELBENCH = ("KernelBench's correctness check, atol=rtol=1e-2 (src/eval.py, run_and_check_correctness), "
                "the loosest bound in common use; half-precision inputs with float32 accumulation")

#: ``TABLE[op_class][dtype] = {"atol", "rtol", "source"}``.
TABLE: Dict[str, Dict[str, Dict]] = {
    "elementwise": {
        "float64": {"atol": 1e-7, "rtol": 1e-7, "source": _ASSERT_CLOSE},
        "float32": {"atol": 1e-5, "rtol": 1.3e-6, "source": _ASSERT_CLOSE},
        "float16": {"atol": 1e-5, "rtol": 1e-3, "source": _ASSERT_CLOSE},
        "bfloat16": {"atol": 1e-5, "rtol": 1.6e-2, "source": _ASSERT_CLOSE},
    },
    "reduction": {
        "float64": {"atol": 1e-7, "rtol": 1e-7, "source": _ASSERT_CLOSE},
        "float32": {"atol": 1e-5, "rtol": 3.05e-5, "source": _HIGHAM},
        "float16": {"atol": 1e-5, "rtol": 1e-3, "source": _LOW_OUT},
        "bfloat16": {"atol": 1e-5, "rtol": 1.6e-2, "source": _LOW_OUT},
    },
    "matmul": {
        "float64": {"atol": 1e-7, "rtol": 1e-7, "source": _ASSERT_CLOSE},
        "float32": {"atol": 5e-3, "rtol": 5e-3, "source": _TF32},
        "float16": {"atol": 1e-2, "rtol": 1e-2, "source": _KERNELBENCH},
        "bfloat16": {"atol": 1e-2, "rtol": 1e-2, "source": _KERNELBENCH},
    },
}


#: Precision policies (kernelsynth/verify/precision.py: POLICIES has their unit roundoffs).
POLICY_NAMES = ("fp64", "fp32", "tf32", "fp16", "bf16")
#: Precision policy (kernelsynth/verify/precision.py) of an ``allclose`` dtype the spec's
#: ``precision`` does not name: TF32 for float32 matmul/conv (as the float32 tolerance above
#: assumes), float32 arithmetic for other float32 tasks, the dtype itself otherwise.
DEFAULT_POLICY = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def default_policy(category: str, dtype: str) -> Optional[str]:
    """The precision policy of ``dtype`` in the class ``category`` names, or None (not a float dtype)."""
    if dtype == "float32" and op_class(category) == "matmul":
        return "tf32"
    return DEFAULT_POLICY.get(dtype)


def op_class(category: str) -> Optional[str]:
    """The operator class a spec ``category`` names (None when it names none)."""
    c = str(category).lower()
    c = ALIASES.get(c, c)
    return c if c in OP_CLASSES else None


def default_tolerance(category: str, dtype: str) -> Optional[Dict]:
    """``{"atol", "rtol", "source"}`` for ``dtype`` (torch's name, e.g. ``"bfloat16"``) in the
    class ``category`` names, or None: data movement (exact only), an unknown class, or an
    integer dtype (integers are compared exactly)."""
    cls = op_class(category)
    if cls is None or cls == "data_movement":
        return None
    entry = TABLE[cls].get(dtype)
    return dict(entry) if entry else None
