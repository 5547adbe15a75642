"""Red team s24 (tests/adversarial/redteam_s24, numeric tasks, CPU path): the holes it found that are
closed, each through the real harness on the CPU plan (``_evaluate``: listed shapes, no derived ones),
with the honest candidates beside them. The README there lists the ones still open."""

import pytest

from conftest import ROOT
from test_redteam_s10_holes import SPECS, _evaluate

RT24 = ROOT / "tests" / "adversarial" / "redteam_s24"


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def _rejected(got, name):
    """The reason of candidate ``name`` in ``_evaluate``'s answer, which must be a rejection."""
    verdict, reason, _, _ = got[name]
    assert verdict == "rejected", (name, verdict, reason)
    return reason


def test_an_input_re_seated_or_restrided_by_the_call_is_rejected():
    """cu_a1: the prefix sums written into the caller's buffer, the caller's x moved onto a private copy
    with ``set_`` (rule 7 read x through the re-seated object: unchanged bits); cs_l1: x left column-major.
    Both change the input's identity (storage, strides) during the call. The honest scan and column sum
    stay accepted."""
    got = _evaluate(SPECS / "cumsum_rows" / "spec.yaml",
                    [RT24 / "cumsum_rows" / "cu_a1_output_over_callers_input_buffer.py",
                     RT24 / "cumsum_rows" / "cu_h1_honest_triangular_mask_scan.py"], shapes=1)
    reason = _rejected(got, "cu_a1_output_over_callers_input_buffer")
    assert "no longer the tensor the caller passed" in reason and "storage" in reason, reason
    assert got["cu_h1_honest_triangular_mask_scan"][:3] == ("accepted", "", None), got
    got = _evaluate(SPECS / "column_sum" / "spec.yaml",
                    [RT24 / "column_sum" / "cs_l1_caller_input_left_column_major.py",
                     RT24 / "column_sum" / "cs_h1_honest_kahan_column_strips.py"], shapes=2)
    reason = _rejected(got, "cs_l1_caller_input_left_column_major")
    assert "no longer the tensor the caller passed" in reason and "strides" in reason, reason
    assert got["cs_h1_honest_kahan_column_strips"][:3] == ("accepted", "", None), got


def test_every_input_is_changed_alone_when_the_odd_shapes_are_fewer_than_the_inputs():
    """ca_m1: an attention output memo keyed on q and k, not v. The interpreter lists two attention shapes:
    the one odd shape changed q alone, never k or v. With fewer odd shapes than tensor inputs, the first odd
    shape now changes each input alone in turn; the honest two-pass attention stays accepted."""
    got = _evaluate(SPECS / "causal_attention" / "spec.yaml",
                    [RT24 / "causal_attention" / "ca_m1_output_memo_keyed_on_q_and_k.py",
                     RT24 / "causal_attention" / "ca_h1_honest_two_pass_softmax.py"], shapes=2)
    reason = _rejected(got, "ca_m1_output_memo_keyed_on_q_and_k")
    assert "input 2 of 3, the others unchanged" in reason, reason
    assert got["ca_h1_honest_two_pass_softmax"][:3] == ("accepted", "", None), got


def test_the_screen_flags_a_child_process_and_shared_mappings():
    """cs_f1: the column sums computed in an ``os.fork`` child and read back through an ``mmap`` -- the
    census watches the worker's own process only. The source screen (rule 20) now names process creation
    and shared mappings; the honest Kahan column sum passes it."""
    from kernelsynth.screen import screen_source

    found = screen_source((RT24 / "column_sum" / "cs_f1_forked_child_computes_the_sums.py").read_text())
    assert any("fork" in f for f in found) and any("mmap" in f for f in found), found
    for src in ("import subprocess\n", "from os import posix_spawn\n", "import os\nos.forkpty()\n"):
        assert screen_source(src), src
    assert screen_source((RT24 / "column_sum" / "cs_h1_honest_kahan_column_strips.py").read_text()) == []


def test_precision_is_metered_on_a_call_with_an_input_tensor_seen_before():
    """ge_r1: GELU at full precision on fresh input objects, its outputs rounded to 16-18 mantissa bits
    when an input tensor comes back (a decode loop's static buffer). Rule 23 metered each trial's first
    call only; the staleness check's first call on the overwritten tensor is metered now."""
    got = _evaluate(SPECS / "gelu_tanh" / "spec.yaml",
                    [RT24 / "gelu_tanh" / "ge_r1_fewer_bits_on_a_reused_input_tensor.py"], shapes=2)
    reason = _rejected(got, "ge_r1_fewer_bits_on_a_reused_input_tensor")
    assert "precision below the declared policy" in reason, reason


def test_a_kernel_that_skips_tiles_starting_with_an_exact_zero_meets_column_sums_zero_probe():
    """cs_z1: a 64x32 tile whose first element is exactly 0.0 is skipped (ReLU outputs). No column_sum input
    held an exact zero (randn, and rule 10 maps 0 away); column_sum now declares a mask probe of zeros."""
    got = _evaluate(SPECS / "column_sum" / "spec.yaml",
                    [RT24 / "column_sum" / "cs_z1_tiles_with_zero_corner_skipped.py",
                     RT24 / "column_sum" / "cs_h1_honest_kahan_column_strips.py"], shapes=4)
    reason = _rejected(got, "cs_z1_tiles_with_zero_corner_skipped")
    assert "input-range probe" in reason, reason
    assert got["cs_h1_honest_kahan_column_strips"][:3] == ("accepted", "", None), got


def test_probes_of_one_signed_rows_and_bfloat16_valued_inputs():
    """cu_v1: a float16 running sum on rows that are all nonnegative (probability rows); ge_b1: bfloat16
    arithmetic on float32 inputs that are bfloat16-exact (upcast activations). No draw reached either class;
    cumsum_rows now declares `abs: 1` and gelu_tanh (float32) `bits: 8` (rule 24): both are rejected there.
    The honest scan stays accepted."""
    got = _evaluate(SPECS / "cumsum_rows" / "spec.yaml",
                    [RT24 / "cumsum_rows" / "cu_v1_fp16_scan_on_nonnegative_rows.py",
                     RT24 / "cumsum_rows" / "cu_h1_honest_triangular_mask_scan.py"], shapes=5)
    reason = _rejected(got, "cu_v1_fp16_scan_on_nonnegative_rows")
    assert "abs" in reason, reason
    assert got["cu_h1_honest_triangular_mask_scan"][:3] == ("accepted", "", None), got
    got = _evaluate(SPECS / "gelu_tanh" / "spec.yaml",
                    [RT24 / "gelu_tanh" / "ge_b1_bf16_math_on_bf16_valued_inputs.py"], shapes=4)
    reason = _rejected(got, "ge_b1_bf16_math_on_bf16_valued_inputs")
    assert "input-range probe: bits 8" in reason, reason


def test_abs_and_bits_probes_transform_the_inputs_and_bad_values_are_spec_errors(tmp_path):
    """The two probe kinds added for cu_v1 and ge_b1 (rule 24): ``abs: s`` gives s |x|, ``bits: 8`` gives
    bfloat16's values in float32 (round to nearest even); integers and non-tensors are kept. A spec with a
    negative ``abs`` or ``bits`` outside 2-23 is refused with the field named."""
    import shutil

    import torch

    from kernelsynth.errors import SpecError
    from kernelsynth.spec import load_spec
    from kernelsynth.verify.inputs import apply_probe

    gen = torch.Generator().manual_seed(0)
    x, i = torch.randn(7, 33, generator=gen), torch.arange(5)
    a, same_i = apply_probe([x, i], {"kind": "abs", "value": 2.0}, gen)
    assert torch.equal(a, 2 * x.abs()) and same_i is i
    b, _ = apply_probe([x, i], {"kind": "bits", "value": 8.0}, gen)
    assert torch.equal(b, x.to(torch.bfloat16).float()) and not torch.equal(b, x)
    folder = tmp_path / "cumsum_rows"
    shutil.copytree(SPECS / "cumsum_rows", folder)
    text = (folder / "spec.yaml").read_text()
    for bad, field in (("  - abs: 1\n", "  - abs: -1\n"), ("  - abs: 1\n", "  - bits: 30\n"),
                       ("  - abs: 1\n", "  - scale: 8\n    bits: 1\n"), ("  - abs: 1\n", "  - abs: 2\n    bits: 8\n"),
                       # one kind per probe (session 25 tried scale + bits and dropped it: redteam_s25 ca_b1, ca_h3);
                       # redteam s25: a NaN factor of the tolerance loaded
                       ("  - abs: 1\n", "  - scale: 8\n    bits: 8\n"),
                       ("  - abs: 1\n", "  - abs: 1\n    atol: .nan\n")):
        (folder / "spec.yaml").write_text(text.replace(bad, field))
        with pytest.raises(SpecError, match=r"probes\[1\](\.(abs|bits|atol)|': expected exactly one of)"):
            load_spec(folder / "spec.yaml", task_folder=True)


def test_a_memo_keyed_on_top_bits_meets_a_change_at_the_absolute_tolerance():
    """cu_s2: an output memo keyed on the top 13 bits of every element (sign, exponent, 4 mantissa bits). Rule
    10's nudge (every element times 1 + 4 rtol = 1 + 1.2e-4) kept the key, and the stale answer stayed inside
    atol 3e-3 on every CPU shape. The largest element of the input now also moves by 4 (atol + rtol |x|) alone:
    a small fraction of itself (the key stays) and 4 atol in the prefix sums. The honest scan stays accepted."""
    got = _evaluate(SPECS / "cumsum_rows" / "spec.yaml",
                    [RT24 / "cumsum_rows" / "cu_s2_memo_keyed_on_sign_and_exponent.py",
                     RT24 / "cumsum_rows" / "cu_h1_honest_triangular_mask_scan.py"], shapes=5)
    reason = _rejected(got, "cu_s2_memo_keyed_on_sign_and_exponent")
    assert "absolute tolerance" in reason, reason
    assert got["cu_h1_honest_triangular_mask_scan"][:3] == ("accepted", "", None), got


def test_plan_bump_moves_the_largest_element_by_four_tolerances():
    import torch

    from kernelsynth.verify.inputs import plan_bump

    x = torch.tensor([[0.5, -3.0], [2.0, float("inf")]])
    ((i, idx, vals),) = plan_bump([x, torch.arange(3)], {"atol": 1e-3, "rtol": 1e-4})
    assert i == 0 and idx.tolist() == [1] and abs(vals.item() - (-3.0 - 4 * (1e-3 + 3e-4))) < 1e-6
    assert plan_bump([x], {"atol": 0.0, "rtol": 1e-3}) == [] and plan_bump([x], None) == []
    one = torch.tensor([1.0], dtype=torch.bfloat16)  # a bump below the spacing: one ulp away from zero
    ((_, _, v),) = plan_bump([one], {"atol": 1e-6, "rtol": 0.0})
    assert v.item() == torch.nextafter(one, torch.tensor([2.0], dtype=torch.bfloat16)).item()


def test_attention_without_its_running_maximum_meets_float32_scores_past_exps_range():
    """ca_n1: p = exp(s) with no running maximum, exact while every score stays below ~88; float32
    attention never met wider scores. causal_attention's float32 probe scales q, k, v by a factor drawn
    in [6, 8] (scores 36-64x wider) and takes any finite answer near the reference's magnitude (honest
    TF32 scores are not exact there): the cheat gives inf / inf. redteam_s25 ca_b1 (the stable path only
    on inputs of 8 significant bits, which session 25's first probe used) is rejected too. Honest kernels
    stay accepted: the two-pass Triton one, a float32 computation rounding q, k and p as TF32 tensor
    cores do (ca_h2), and one folding the scale into q before that product (redteam_s25 ca_h3, which the
    8-bit probe rejected)."""
    rt25 = ROOT / "tests" / "adversarial" / "redteam_s25" / "causal_attention"
    got = _evaluate(SPECS / "causal_attention" / "spec.yaml",
                    [RT24 / "causal_attention" / "ca_n1_softmax_without_max_subtraction.py",
                     rt25 / "ca_b1_stable_path_only_on_bf16_valued_inputs.py",
                     RT24 / "causal_attention" / "ca_h1_honest_two_pass_softmax.py",
                     RT24 / "causal_attention" / "ca_h2_honest_tf32_emulation.py",
                     rt25 / "ca_h3_honest_tf32_prescaled_q_exp2.py"], shapes=2,
                    probes=lambda q: q.get("dtypes") == ["float32"])
    for cheat in ("ca_n1_softmax_without_max_subtraction", "ca_b1_stable_path_only_on_bf16_valued_inputs"):
        reason = _rejected(got, cheat)
        assert "input-range probe: scale 6-8" in reason and "NaN where the reference has none" in reason, reason
    assert got["ca_h1_honest_two_pass_softmax"][:3] == ("accepted", "", None), got
    for honest in ("ca_h2_honest_tf32_emulation", "ca_h3_honest_tf32_prescaled_q_exp2"):
        assert got[honest][:2] == ("accepted", ""), got
