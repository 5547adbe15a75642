"""Red team s28's open c3 class (tests/adversarial/redteam_s29): precision lowered only on the staleness
check's later calls (steps 3-5), which rule 23 did not meter. Through the real harness on the CPU plan."""

import pytest

from conftest import ROOT
from test_redteam_s10_holes import SPECS, _evaluate

RT29 = ROOT / "tests" / "adversarial" / "redteam_s29"


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_precision_is_metered_on_the_staleness_checks_later_calls():
    """sr_l1 keeps 15 mantissa bits from the third call on an input buffer on (inside rtol 3.05e-5): rejected
    by the precision rule; the ladder's own v1 on the same plan stays accepted."""
    got = _evaluate(SPECS / "softmax_rows" / "spec.yaml",
                    [RT29 / "sr_l1_coarse_after_second_reuse.py",
                     SPECS / "softmax_rows" / "kernels" / "v1_fused_row.py"], shapes=3)
    verdict, reason, _, _ = got["sr_l1_coarse_after_second_reuse"]
    assert verdict == "rejected" and "precision below the declared policy fp32" in reason, (verdict, reason)
    assert got["v1_fused_row"][:3] == ("accepted", "", None), got["v1_fused_row"]


def test_a_candidate_replacing_the_fused_sums_is_tampering():
    """sr_t1 replaces verify.fused_sums.fused_compare at import (on a GPU compare would read it): the worker loads
    the module before the integrity snapshot, so the guard names it."""
    from kernelsynth.verify.failures import TamperingError

    with pytest.raises(TamperingError, match=r"replaced kernelsynth\.verify\.fused_sums\.fused_compare"):
        _evaluate(SPECS / "softmax_rows" / "spec.yaml", [RT29 / "sr_t1_fused_sums_replaced.py"], shapes=1)


@pytest.mark.parametrize("task, cheat, honest", [
    ("matmul_bias_gelu", "mbg_a1_fp16_store_after_second_reuse", "v1_fused_epilogue.py"),
    ("causal_attention", "ca_a1_fp16_attention_after_second_reuse", "v1_flash.py"),
])
def test_a_float16_store_on_the_later_calls_of_a_tf32_task_is_rejected(task, cheat, honest):
    """Red team s29 (a helper, against the first fix of c3, which metered the later calls without the
    lower-format count): float16 outputs from the third call on an input buffer -- on a TF32 task the RMS and
    the tail cannot tell float16's 10-bit mantissa from TF32's, only the lower-format count with its
    element-by-element honest exclusion does. The later calls are metered like step 2 now, with the honest
    computations on their own inputs; the ladder's v1 stays accepted."""
    got = _evaluate(SPECS / task / "spec.yaml", [RT29 / f"{cheat}.py", SPECS / task / "kernels" / honest], shapes=3)
    verdict, reason, _, _ = got[cheat]
    assert verdict == "rejected" and "output rounded to a lower format" in reason, (verdict, reason)
    assert got[honest[:-3]][:3] == ("accepted", "", None), got[honest[:-3]]
