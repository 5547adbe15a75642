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


_TF32_ATTENTION = """import math
import torch
from kernelsynth.verify.precision import truncate_mantissa


class ModelNew(torch.nn.Module):
    def forward(self, q, k, v):
        s = truncate_mantissa(q, 10) @ truncate_mantissa(k, 10).transpose(-1, -2) / math.sqrt(q.shape[-1])
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))
        return torch.softmax(s, -1) @ v
"""

_TF32_CONV = """import torch
import torch.nn.functional as F
from kernelsynth.verify.precision import truncate_mantissa


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=True)

    def forward(self, x):
        w = truncate_mantissa(self.conv.weight, 10)
        y = F.conv2d(truncate_mantissa(x, 10), w, self.conv.bias, padding=1)
        return F.max_pool2d(torch.relu(y), 2)
"""


def _float32_request(tmp_path, task, source, name, **changes):
    """The float32 job request of the external candidate ``source`` (written to ``name``.py) on
    ``task``'s CPU plan, with ``changes`` applied (verify_shapes, derived_shapes, probes, ...)."""
    import dataclasses

    from test_redteam_s10_holes import CPU_HW, Exploration, ExternalCandidate, load_spec

    f = tmp_path / f"{name}.py"
    f.write_text(source)
    job = next(j for j in Exploration(trials=1, baselines=False, sources=["external"]).plan(
        load_spec(SPECS / task / "spec.yaml"), CPU_HW, external=[ExternalCandidate(f.stem, f)])
        if j.request.candidate.role == "external" and j.request.dtype == "float32")
    return dataclasses.replace(job.request, **changes)


@pytest.mark.parametrize("task,source,shape", [
    ("causal_attention", _TF32_ATTENTION, {"B": 1, "H": 2, "S": 37}),
    ("conv_relu_maxpool", _TF32_CONV, {"N": 1, "C_in": 64, "C_out": 16, "H": 10, "W": 10}),
])
def test_the_ordinary_call_before_a_probe_is_held_to_the_looser_tolerance(tmp_path, task, source, shape):
    """Found on an H100 (session 27). Rule 24's probe is a later call: on an even listed shape the
    probe's module first gets ordinary inputs. Compared under the probe's tolerance, the 2^-20
    attention probe (atol x 2^-20) rejected eager SDPA, v1 and v2 float32 at 1x4x129; compared under
    the ordinary one, conv's probe (its parameters scaled 2^17 too: outputs 2^17 larger) rejected
    every TF32 version. The CPU plan's even shapes hid both (attention: one key, exact; conv: small
    sums). Here: the policy's own TF32 emulation (truncated operands), each on one even shape."""
    from kernelsynth.jobs import evaluate

    import dataclasses

    req = _float32_request(tmp_path, task, source, "tf32_honest", verify_shapes=[shape], derived_shapes=[])
    req = dataclasses.replace(req, probes=[q for q in req.probes
                                           if not isinstance(q.get("value"), list) and q.get("kind") == "scale"])
    assert req.probes  # the fixed-scale probe is in the plan
    res = evaluate(req)
    assert (res.verdict, res.reason) == ("accepted", ""), res.reason


def test_the_parent_audit_leaves_out_lower_format_outputs_the_honest_emulation_shares(tmp_path):
    """Found on an H100 (session 27): with the worker's lower-format statistic fixed (session 26:
    elements an honest output also gives in float16's mantissa are not counted), causal_attention
    float32's v1/v2 were still rejected by the parent's independent check -- "derived shapes: output
    rounded to a lower format: 32.04 %" -- which had no honest outputs to compare with. The oracle now
    sends where they are in the lower format (``honest_low``). A one-key shape (each output is v
    rounded to TF32, as the TF32 emulation gives it) through the real worker, oracle and audit."""
    from kernelsynth.audit import audit_problem
    from kernelsynth.jobs import evaluate, oracle

    source = _TF32_ATTENTION.replace("torch.softmax(s, -1) @ v",
                                     "truncate_mantissa(torch.softmax(s, -1), 10) @ truncate_mantissa(v, 10)")
    req = _float32_request(tmp_path, "causal_attention", source, "tf32_pv", derived_shapes=[], probes=[],
                           verify_shapes=[{"B": 4, "H": 2, "S": 1}, {"B": 3, "H": 2, "S": 1}])
    res = evaluate(req)
    assert (res.verdict, res.reason) == ("accepted", ""), res.reason
    refs = oracle(req)["references"]
    assert all("honest_low" in r for r in refs.values()), sorted(refs)
    assert audit_problem(res.audit, refs, "allclose", req.tol, req.precision) is None
    # without the oracle's mask the audit counts every one-key output (all in float16's mantissa)
    bare = {k: {f: v for f, v in r.items() if f != "honest_low"} for k, r in refs.items()}
    msg = audit_problem(res.audit, bare, "allclose", req.tol, req.precision)
    assert msg and "output rounded to a lower format" in msg, msg
