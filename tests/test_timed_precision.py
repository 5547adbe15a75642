"""Rule 23 on calls the harness did not verify (jobs._unverified_precision; session 11): a
candidate that computes at the policy only where it can tell it is verified -- redteam_s11 cw1
reads the poisoning mode's sentinel out of ``torch.empty`` and uses float16 operands on every
other call, the timed ones included -- meets the precision rule on its timed outputs."""

from types import SimpleNamespace

import pytest
import torch

from kernelsynth.jobs import _unverified_precision
from kernelsynth.verify import VerificationFailure, run_reference
from kernelsynth.verify.protocol import VerifyPolicy


class Linear(torch.nn.Module):
    def __init__(self, k=512, n=64):
        super().__init__()
        self.lin = torch.nn.Linear(k, n)

    def forward(self, x):
        return self.lin(x)


def _setup(precision="tf32", comparison="allclose"):
    torch.manual_seed(0)
    model = Linear().eval()
    x = torch.randn(96, 512)
    ref = run_reference(model, [x], "allclose", torch.float32)
    w, b = model.lin.weight.detach().float(), model.lin.bias.detach().float()
    p = SimpleNamespace(comparison=comparison, timing_shape={"M": 96, "K": 512})
    policy = VerifyPolicy(comparison=comparison, dtype=torch.float32, device=torch.device("cpu"), seed=0,
                          precision=precision)
    return _unverified_precision(model, p, policy), x, ref, w, b


def test_float16_operands_on_an_unverified_call_are_rejected_and_float32_passes():
    check, x, ref, w, b = _setup()
    honest = x @ w.T + b
    terms = check(honest, [x], ref)  # float32: more than TF32
    assert terms is not None and terms["scale"] is not None
    check(honest, [x], ref, terms)  # reused terms: the kernel census's call on the same inputs
    fp16 = (x.half().float() @ w.half().float().T + b)  # float16's 10-bit mantissa: within TF32's RMS ...
    check(fp16, [x], ref, terms)  # ... so on ordinary inputs it passes, as in a verified call
    bf16 = (x.bfloat16().float() @ w.bfloat16().float().T + b)
    with pytest.raises(VerificationFailure, match="precision below the declared policy tf32"):
        check(bf16, [x], ref, terms)


def test_exact_tasks_and_tasks_without_a_policy_are_not_measured():
    check, x, ref, w, b = _setup(comparison="exact")
    assert check((x @ w.T).bfloat16().float(), [x], ref) is None
    check, x, ref, w, b = _setup(precision=None)
    assert check((x @ w.T).bfloat16().float(), [x], ref) is None


def test_a_fixed_scale_probe_runs_once_more_unwatched_and_meets_a_float16_path():
    """redteam_s11 cw1's class: float16 operands whenever the call is not poisoned. A plain call
    with the timing inputs times the probe's factor overflows float16 (|x| 2^17 > 65504)."""
    from kernelsynth.jobs import _unwatched_scale_probes

    class Float16WhenUnwatched(torch.nn.Module):
        def __init__(self, ref):
            super().__init__()
            self.ref = ref

        def forward(self, x):
            w, b = self.ref.lin.weight, self.ref.lin.bias
            return (x.half() @ w.half().T).float() + b  # what cw1 does outside verified calls

    torch.manual_seed(0)
    ref = Linear().eval()
    x = torch.randn(96, 512)
    probe = {"kind": "scale", "value": 2.0 ** 17, "atol": 2.0 ** 17}
    p = SimpleNamespace(comparison="allclose", probes=[probe, {"kind": "scale", "value": 16.0, "low": 4.0}])
    policy = VerifyPolicy(comparison="allclose", dtype=torch.float32, device=torch.device("cpu"), seed=0,
                          precision="tf32", tol={"atol": 1e-3, "rtol": 1e-3})
    gen = torch.Generator().manual_seed(0)
    _unwatched_scale_probes(ref, ref, p, policy, [x], gen, torch.float32)  # the reference itself passes
    with pytest.raises(VerificationFailure, match="the inputs times 131072 .*outside the poisoning mode"):
        _unwatched_scale_probes(Float16WhenUnwatched(ref), ref, p, policy, [x], gen, torch.float32)
    assert torch.isfinite(Float16WhenUnwatched(ref)(x)).all()  # on ordinary inputs it is fine
