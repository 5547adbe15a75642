"""Rule 3 (layout), session 15: an output of exactly type ``torch.Tensor`` whose own instance
attributes shadow ``torch.Tensor``'s methods answers every caller -- and every check that asks it
through them -- with what those functions say, not with what its memory holds (redteam_s15 dw_d1:
an NHWC buffer returned as an NCHW view whose ``is_contiguous`` says True). ``compare`` rejects it,
the audit digest reads the memory through the C method and carries the names, and the parent's
audit refuses it too."""

import pytest
import torch

from conftest import ROOT
from kernelsynth.audit import audit_problem
from kernelsynth.verify.comparison import compare, shadowed_attributes
from kernelsynth.verify.failures import VerificationFailure
from kernelsynth.verify.transport import digest, tensor_of
from test_redteam_s10_holes import SPECS, _evaluate

S15 = ROOT / "tests" / "adversarial" / "s15"


def _nhwc_claiming_contiguous(ref):
    n, c, h, w = ref.shape
    nhwc = torch.empty(n, h, w, c)
    nhwc.copy_(ref.permute(0, 2, 3, 1))
    y = nhwc.permute(0, 3, 1, 2)  # right values, channels_last memory
    y.is_contiguous = lambda *a, **k: True
    return y


def test_a_shadowed_is_contiguous_or_value_method_is_a_wrong_output():
    ref = torch.randn(2, 3, 4, 5)
    y = _nhwc_claiming_contiguous(ref)
    assert torch.equal(y, ref) and y.is_contiguous() and not torch._C.TensorBase.is_contiguous(y)
    with pytest.raises(VerificationFailure, match="is_contiguous shadow torch.Tensor's"):
        compare(y, ref, "exact", None)
    with pytest.raises(VerificationFailure, match="shadow"):
        compare(y, ref.double(), "allclose", {"atol": 1e-5, "rtol": 1e-5}, torch.float32)
    garbage = torch.zeros_like(ref)  # memory all zeros, ``double`` answers with the reference
    garbage.double = lambda *a, **k: ref.double()
    with pytest.raises(VerificationFailure, match="double shadow"):
        compare(garbage, ref.double(), "allclose", {"atol": 1e-5, "rtol": 1e-5}, torch.float32)
    # honest outputs: no instance attributes, whatever their history
    for honest in (ref.clone(), ref.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).contiguous(), ref + 0):
        assert shadowed_attributes(honest) == []
        compare(honest, ref, "exact", None)
    plain = ref.clone()
    plain.note = "an attribute no torch.Tensor has"  # harmless: nothing reads it
    assert shadowed_attributes(plain) == []


def test_the_digest_reads_the_memory_and_the_parent_audit_refuses_shadowing():
    ref = torch.randn(3, 4)
    lie = torch.zeros_like(ref)
    lie.detach = lambda *a, **k: ref
    lie.contiguous = lambda *a, **k: ref
    d = digest(lie, "exact")
    assert d["shadowed"] == ["contiguous", "detach"]
    assert torch.equal(tensor_of(d), torch.zeros(3, 4))  # the memory, not what the methods say
    reason = audit_problem({"k": d}, {"k": {"where": "shape 3x4, trial 0", "digest": digest(ref, "exact")}}, "exact", None)
    assert reason and "shadow torch.Tensor's" in reason, reason
    assert "shadowed" not in digest(ref, "exact")


def test_a_flip_that_returns_its_input_behind_shadowed_methods_is_rejected_by_the_harness(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    got = _evaluate(SPECS / "flip2d" / "spec.yaml", [S15 / "flip_shadowed_contiguous.py"], shapes=2, trials=1)
    verdict, reason, _, _ = got["flip_shadowed_contiguous"]
    assert verdict == "rejected" and "shadow torch.Tensor's" in reason, reason


def test_attributes_left_on_an_input_that_shadow_tensor_methods_fail_the_call(monkeypatch):
    """The harness reads, overwrites and clones a call's inputs after it returns (rules 7, 9-10); a
    candidate that flips its input in place and shadows the input's ``view`` made the bitwise check
    of the inputs read a saved copy (accepted before: the caller's tensor was clobbered)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    got = _evaluate(SPECS / "flip2d" / "spec.yaml", [S15 / "flip_in_place_input_view_shadowed.py"], shapes=2, trials=1)
    verdict, reason, _, _ = got["flip_in_place_input_view_shadowed"]
    assert verdict == "rejected" and "attributes that shadow torch.Tensor's (view)" in reason, reason


def test_red_team_s15_shadowed_layout_and_state_methods_are_rejected(monkeypatch):
    """redteam_s15 dw_d1 (channels_last memory, ``is_contiguous`` says True), sb_d1 (an inference
    tensor whose ``is_inference`` says False) and ro_d1 (a negative-bit view whose ``is_neg`` says
    False; before, only an exception in a later bit view stopped it): all accepted or rejected by
    accident before session 15, each rejected by rule 3 now, on the first trial."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    rt15 = ROOT / "tests" / "adversarial" / "redteam_s15"
    for task, name, method in [
            ("depthwise_conv2d", "dw_d1_nhwc_output_with_shadowed_is_contiguous", "is_contiguous"),
            ("softmax_backward", "sb_d1_inference_tensor_with_shadowed_is_inference", "is_inference"),
            ("rope", "ro_d1_negative_bit_output_with_shadowed_is_neg", "is_neg")]:
        got = _evaluate(SPECS / task / "spec.yaml", [rt15 / task / f"{name}.py"], shapes=1, trials=1)
        verdict, reason, _, _ = got[name]
        assert verdict == "rejected" and f"attributes {method} shadow torch.Tensor's" in reason, (name, reason)


def test_a_dict_subclass_that_hides_its_keys_does_not_hide_a_shadowing_attribute():
    """Session 15 review: ``out.__dict__`` may be assigned a dict subclass whose ``__iter__``,
    ``__len__`` and ``keys`` answer empty while attribute lookup (the C dict lookup) still finds
    ``is_contiguous`` in it; the check reads the keys through ``dict.keys``."""

    class Hide(dict):
        def __iter__(self):
            return iter(())

        def __len__(self):
            return 0

        def keys(self):
            return []

    ref = torch.randn(2, 3, 4, 5)
    y = _nhwc_claiming_contiguous(ref)
    y.__dict__ = Hide(is_contiguous=lambda *a, **k: True)
    assert y.is_contiguous() and list(vars(y)) == []  # the lie works, and the keys are hidden from iteration
    assert shadowed_attributes(y) == ["is_contiguous"]
    with pytest.raises(VerificationFailure, match="is_contiguous shadow"):
        compare(y, ref, "exact", None)


def test_a_key_that_is_not_a_str_but_matches_a_name_is_reported():
    """Session 15 review: a key object whose ``__hash__`` and ``__eq__`` match ``"is_contiguous"``
    answers the attribute lookup as well as the name itself would."""

    class Key:
        def __hash__(self):
            return hash("is_contiguous")

        def __eq__(self, other):
            return True

    ref = torch.randn(2, 3, 4, 5)
    y = _nhwc_claiming_contiguous(ref)
    del y.is_contiguous
    vars(y)[Key()] = lambda *a, **k: True
    assert y.is_contiguous() and not torch._C.TensorBase.is_contiguous(y)
    assert shadowed_attributes(y) == ["<Key key>"]
    with pytest.raises(VerificationFailure, match="<Key key> shadow"):
        compare(y, ref, "exact", None)


@pytest.mark.parametrize("script,reason", [
    ("repro_earlier_shadow.py", "an earlier output gained attributes that shadow torch.Tensor's"),
    ("repro_input_clobber.py", "an earlier output gained attributes that shadow torch.Tensor's"),
    ("repro_storage_ptr_lie.py", "the output does not lie in memory allocated during the call"),
])
def test_lies_planted_on_earlier_outputs_and_storage_objects_are_refused(script, reason):
    """Session 15, an attack on the first version of the shadow check (tests/adversarial/s15/attacks,
    each a script that runs the real verify or call_poisoned and passed before): lies planted on the
    PREVIOUS output during the next call (``numel``/``contiguous`` read by check_earlier_output and
    shares_storage; a ``contiguous`` hook that shadows the input's ``view`` until the next call, hiding
    an input zeroed in place), and a storage object whose instance ``data_ptr`` answered the
    ownership check with a throwaway address (rule 10's fa1 ring revived). The checks read tensors
    and storages through the C methods now, and an earlier output with such attributes fails."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(S15 / "attacks" / script)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and reason in done.stderr, (done.stdout[-2000:], done.stderr[-2000:])


def test_the_precision_sums_read_the_output_through_the_c_methods():
    """Rule 23 reads ``out`` after rule 3's check; code that runs in between (a gc callback, a
    ``__del__``) could plant ``detach``/``contiguous``/``numel`` on it. The sums must measure the
    memory, not what those answer (review of session 15)."""
    from kernelsynth.verify.precision import trial_sums

    ref64 = torch.randn(64, 32, dtype=torch.float64)
    scale = ref64.abs() + 1.0
    wrong = (ref64 + 0.25).float()  # far outside any float32 rounding
    honest = ref64.float()
    plain = trial_sums(wrong.clone(), ref64, scale, [honest])
    lie = wrong.clone()
    lie.detach = lambda *a, **k: honest
    lie.contiguous = lambda *a, **k: honest
    lie.numel = lambda *a, **k: 0
    lied = trial_sums(lie, ref64, scale, [honest])
    assert lied["candidate"] == plain["candidate"] and lied["low"] == plain["low"]
    assert lied["candidate"][0] > 0.25 ** 2 * 64 * 32 / 4 ** 2  # the real errors, not honest's ~0
