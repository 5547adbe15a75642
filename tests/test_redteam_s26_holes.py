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


def test_the_ordinary_call_before_a_shrinking_probe_keeps_the_ordinary_tolerance(tmp_path):
    """Found on an H100 (session 27): with the 2^-20 probe, every float32 attention (eager SDPA, v1, v2)
    was rejected at 1x4x129 because the call on ordinary inputs made before the probe (rule 24: the
    probe is a later call) was compared under the probe's tolerance, atol x 2^-20, where TF32's
    errors on outputs near zero exceed it. The CPU plan's even listed shape has S = 1 (output = v,
    exact), so it never showed. Here: TF32-rounded q, k (the policy's own emulation) at 37 keys."""
    import dataclasses

    from kernelsynth.jobs import evaluate
    from test_redteam_s10_holes import CPU_HW, Exploration, ExternalCandidate, load_spec

    honest = tmp_path / "tf32_math.py"
    honest.write_text(
        "import math\nimport torch\nfrom kernelsynth.verify.precision import truncate_mantissa\n\n\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        s = truncate_mantissa(q, 10) @ truncate_mantissa(k, 10).transpose(-1, -2) / math.sqrt(q.shape[-1])\n"
        "        n = s.shape[-1]\n"
        "        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))\n"
        "        return torch.softmax(s, -1) @ v\n")
    spec = load_spec(SPECS / "causal_attention" / "spec.yaml")
    job = next(j for j in Exploration(trials=1, baselines=False, sources=["external"]).plan(
        spec, CPU_HW, external=[ExternalCandidate(honest.stem, honest)]) if j.request.candidate.role == "external")
    req = dataclasses.replace(job.request, verify_shapes=[{"B": 1, "H": 2, "S": 37}], derived_shapes=[],
                              probes=[q for q in job.request.probes if q.get("value", 1) < 1])
    assert req.probes, job.request.probes  # the 2^-20 probe is in the plan
    res = evaluate(req)
    assert (res.verdict, res.reason) == ("accepted", ""), res.reason
