"""Session 11: holes of tests/adversarial/redteam_s11 on the CPU path, each red-team file through
the real harness (:func:`kernelsynth.jobs.evaluate` in this process, the task's CPU plan cut to a
few listed shapes and trials, no derived shapes; the helper of tests/test_redteam_s10_holes.py),
next to an honest candidate of the same task that stays accepted and unlabelled:

* ft1 (a ``torch.library`` kernel for ``aten::flip`` that agrees with its stale answers): rule 13,
  the reference's operators' kernels are guarded (tampering);
* fo1, mo1, xo1 (the library reached through ``OpOverload.redispatch`` below the Python key):
  rule 14 labels ``redispatch:<op>`` (kept out of kernel records);
* fz1 (a flip addressing its input's storage base): rule 1, inputs at a storage offset;
* mw1 (float16 operands whenever the poisoning mode's sentinel is absent): rule 15, a fixed scale
  probe once more as a plain call.
"""

import pytest

from conftest import ROOT
from test_redteam_s10_holes import SPECS, _evaluate  # noqa: F401 - the shared harness helper

RT11 = ROOT / "tests" / "adversarial" / "redteam_s11"


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_a_dispatcher_registration_for_the_references_operator_is_tampering():
    from kernelsynth.verify.failures import TamperingError

    with pytest.raises(TamperingError, match="registered a kernel for aten::flip"):
        _evaluate(SPECS / "flip2d" / "spec.yaml", [RT11 / "flip/ft1_identity_memo_with_the_reference_flip_overridden.py"],
                  shapes=2, trials=1)


def test_redispatch_below_the_python_key_is_labelled_and_offset_inputs_meet_a_storage_base_kernel():
    got = _evaluate(SPECS / "flip2d" / "spec.yaml",
                    [RT11 / "flip/fo1_flip_through_redispatch.py", RT11 / "flip/fz1_indexes_from_the_storage_base.py",
                     RT11 / "flip/fh5_persistent_grid_stride_tiles.py"], shapes=3, trials=2)
    verdict, _, calls, _ = got["fo1_flip_through_redispatch"]
    assert verdict == "accepted" and "redispatch:flip" in calls.split(",")  # labelled: no kernel record
    verdict, reason, _, _ = got["fz1_indexes_from_the_storage_base"]
    assert verdict == "rejected" and "not bit-exact" in reason, reason
    assert got["fh5_persistent_grid_stride_tiles"][0] == "accepted" and got["fh5_persistent_grid_stride_tiles"][2] is None


def test_matmul_through_redispatch_is_labelled_and_float16_outside_verified_calls_is_rejected():
    got = _evaluate(SPECS / "matmul_bias_gelu" / "spec.yaml",
                    [RT11 / "matmul/mo1_addmm_through_redispatch.py", RT11 / "matmul/mw1_fp16_operands_when_unwatched.py",
                     RT11 / "matmul/mh3_bf16x3_split_operands.py"], shapes=2, trials=2)
    verdict, _, calls, _ = got["mo1_addmm_through_redispatch"]
    assert verdict == "accepted" and "redispatch:addmm" in calls.split(",")
    verdict, reason, _, _ = got["mw1_fp16_operands_when_unwatched"]
    assert verdict == "rejected" and "outside the poisoning mode" in reason and "NaN" in reason, reason
    assert got["mh3_bf16x3_split_operands"][0] == "accepted" and got["mh3_bf16x3_split_operands"][2] is None


def test_cross_entropy_through_redispatch_is_labelled():
    got = _evaluate(SPECS / "cross_entropy" / "spec.yaml", [RT11 / "xent/xo1_log_softmax_through_redispatch.py"],
                    shapes=2, trials=1)
    verdict, _, calls, _ = got["xo1_log_softmax_through_redispatch"]
    assert verdict == "accepted" and "redispatch:_log_softmax" in calls.split(",")


def test_a_cache_keyed_on_the_initial_seed_meets_two_builds_of_one_seed_with_other_weights():
    """redteam_s11 cp1 cached packed weights on ``torch.initial_seed()`` except under a dispatch
    mode (the shared-seed trials' PerturbDraws); every mode-free build now starts from one shared
    initial seed and a build-specific advance (jobs._constructing), so listed trial 4 and the
    census call of the last listed shape share it with other weights. The honest Winograd ch1 stays."""
    got = _evaluate(SPECS / "conv_relu_maxpool" / "spec.yaml",
                    [RT11 / "conv/cp1_packed_weights_cached_on_the_initial_seed.py",
                     RT11 / "conv/ch1_winograd_f2x2_3x3_fused_pool.py"], shapes=1, trials=5)
    verdict, reason, _, _ = got["cp1_packed_weights_cached_on_the_initial_seed"]
    assert verdict == "rejected" and "outside atol" in reason, reason
    assert got["ch1_winograd_f2x2_3x3_fused_pool"][0] == "accepted" and got["ch1_winograd_f2x2_3x3_fused_pool"][2] is None


def test_mode_free_builds_share_an_initial_seed_and_differ_in_their_weights():
    import torch

    from kernelsynth.jobs import INIT_SEED, SHARED_BUILD_SEED, _constructing

    seen = []
    for seed in (11, 12, 13):
        with _constructing(seed, None):
            seen.append((torch.initial_seed(), torch.nn.Linear(8, 8).weight.detach().clone()))
    assert {s for s, _ in seen} == {SHARED_BUILD_SEED}
    assert not torch.equal(seen[0][1], seen[1][1]) and not torch.equal(seen[1][1], seen[2][1])
    with _constructing(12, None):  # the same trial seed gives the same weights (reference = candidate)
        assert torch.equal(torch.nn.Linear(8, 8).weight, seen[1][1])
    with _constructing(INIT_SEED, None):  # the baselines' builds are torch.manual_seed(INIT_SEED)'s
        assert torch.initial_seed() == INIT_SEED


def test_an_empty_grid_launch_is_no_kernel_of_the_candidate():
    """redteam_s11 fo2 launched placeholder kernels over grid (0,); a callable grid is judged by
    the extent it returned for that launch (census.install_watch), not by a second call of it."""
    from kernelsynth.verify.census import _empty_grid

    assert _empty_grid((0,), {}) and _empty_grid((4, 0, 1), {}) and _empty_grid(0, {})
    assert not _empty_grid((4, 1), {}) and not _empty_grid(None, {}) and not _empty_grid(("x",), {})
