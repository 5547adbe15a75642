"""Red team s26 (tests/adversarial/redteam_s26, causal_attention float32, CPU path): the holes it found
that are closed, through the real harness on the CPU plan (``_evaluate``: listed shapes, no derived
ones), with an honest candidate beside them. ca_l2 and ca_l3 (float16 stores on the rows over more
than one key, let through by session 26's first fix of the lower-format statistic) are covered by
tests/test_precision.py's element-wise test; the README there lists what is still open."""

import pytest

from conftest import ROOT
from test_redteam_s10_holes import SPECS, _evaluate

RT26 = ROOT / "tests" / "adversarial" / "redteam_s26"
RT24 = ROOT / "tests" / "adversarial" / "redteam_s24"


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_float16_operands_on_the_tf32_attention_meet_the_tiny_scale_probe():
    """ca_f1: q, k, v and p in float16 on the tensor cores of a TF32 task -- inside float16's range as
    precise as truncated TF32, so no error statistic saw it. causal_attention's float32 probe at 2^-20
    puts v where float16 is subnormal; the honest two-pass attention (exact float32) stays accepted."""
    got = _evaluate(SPECS / "causal_attention" / "spec.yaml",
                    [RT26 / "causal_attention" / "ca_f1_fp16_tensor_cores.py",
                     RT24 / "causal_attention" / "ca_h1_honest_two_pass_softmax.py"], shapes=2)
    verdict, reason, _, _ = got["ca_f1_fp16_tensor_cores"]
    assert verdict == "rejected" and "input-range probe: scale 9.53674e-07" in reason, (verdict, reason)
    assert got["ca_h1_honest_two_pass_softmax"][:3] == ("accepted", "", None), got
