"""Red team s16 (tests/adversarial/redteam_s16, conv_relu_maxpool, CPU path): the holes it found,
each through the real harness on the CPU plan (``_evaluate``: listed shapes, no derived ones), with
the honest candidates beside them."""

import pytest
import triton
import triton.language as tl

from conftest import ROOT
from test_redteam_s10_holes import SPECS, _evaluate

RT16 = ROOT / "tests" / "adversarial" / "redteam_s16" / "conv_relu_maxpool"
CONV = SPECS / "conv_relu_maxpool" / "spec.yaml"


@triton.jit
def _copy_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_host_work_in_an_autotuner_do_bench_or_a_pointer_objects_methods_is_labelled():
    """c3: the convolution in numpy inside the ``do_bench`` given to ``@triton.autotune`` (Autotuner._bench
    was exempt as a whole); c3b: inside the ``data_ptr``/``untyped_storage`` methods of an object passed
    to the kernel as a pointer (Triton calls them inside the launch's exemption). h1, an honest
    ``@triton.autotune`` candidate, stays unlabelled."""
    got = _evaluate(CONV, [RT16 / "c3_numpy_conv_in_autotuner_do_bench.py",
                           RT16 / "c3b_numpy_conv_in_a_pointer_arguments_methods.py",
                           RT16 / "h1_honest_autotuned_im2col_dot_four_windows.py"], shapes=1)
    verdict, reason, calls, _ = got["c3_numpy_conv_in_autotuner_do_bench"]
    assert calls and "host:numpy" in calls, (verdict, reason, calls)
    verdict, reason, calls, _ = got["c3b_numpy_conv_in_a_pointer_arguments_methods"]
    assert calls and "host:launch_argument:" in calls, (verdict, reason, calls)
    assert got["h1_honest_autotuned_im2col_dot_four_windows"][:3] == ("accepted", "", None), got


def test_an_output_in_shared_memory_is_rejected():
    """c1 (its setup hidden in an autotuner's do_bench) and c1b (in plain sight): the output moved to
    shared memory, which the candidate maps a second time and zeroes calls later. An output whose CPU
    storage is shared fails rule 10 at once."""
    got = _evaluate(CONV, [RT16 / "c1_output_in_shared_memory_recycled_three_calls_later.py",
                           RT16 / "c1b_output_in_shared_memory_plain_plumbing.py"], shapes=1)
    for name, (verdict, reason, _, _) in got.items():
        assert verdict == "rejected" and "shared memory" in reason, (name, verdict, reason)


def test_an_output_memo_that_ignores_the_bias_meets_trial_0s_inputs_with_another_bias():
    """c4: a process-wide output memo keyed on full hashes of x and the weight, not the bias. Trial 3
    (same weight, another bias) now draws trial 0's inputs, so the memo answers with trial 0's output."""
    got = _evaluate(CONV, [RT16 / "c4_output_memo_across_modules_ignores_bias.py"], shapes=1, trials=4)
    verdict, reason, _, _ = got["c4_output_memo_across_modules_ignores_bias"]
    assert verdict == "rejected" and "trial 3" in reason, (verdict, reason)


def test_a_memo_blind_to_the_first_input_row_meets_the_first_element_alone():
    """c6: a memo keyed on every input element but ``x[0, 0, 0, :]``; the staleness check's odd listed
    shape now changes the first element alone too (after the last element alone)."""
    got = _evaluate(CONV, [RT16 / "c6_memo_blind_to_the_first_input_row.py",
                           RT16 / "h2_honest_unfused_fma_map_then_pool_prepacked.py"], shapes=2)
    verdict, reason, _, _ = got["c6_memo_blind_to_the_first_input_row"]
    assert verdict == "rejected" and "first element of the input alone" in reason, (verdict, reason)
    assert got["h2_honest_unfused_fma_map_then_pool_prepacked"][:3] == ("accepted", "", None), got


def test_triton_autotune_hooks_are_told_apart_triton_own_exempt_the_candidates_counted(monkeypatch):
    """Inside Triton's own benchmarker (exempt), the hooks given to @triton.autotune run counted
    (``in_launch`` 0) and Triton's own stay exempt; an honest autotuned flip (Triton's reset_to_zero
    hook, a do_bench of its own) is accepted unlabelled through the harness. Triton's default
    benchmarker needs a GPU driver, so here a stand-in is declared Triton's."""
    import torch
    import triton
    import triton.language as tl  # noqa: F401

    from kernelsynth.verify import census

    census.install_watch()
    seen = []

    def triton_bench(kernel_call, quantiles):
        seen.append(("bench", census._STATE["in_launch"]))
        kernel_call()
        return [1.0, 1.0, 1.0]

    def hook(nargs, reset_only=False):
        seen.append(("hook", census._STATE["in_launch"]))

    monkeypatch.setattr(census, "_triton_own", lambda fn: fn is triton_bench)
    tuned = triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16})], key=["n"],
                            pre_hook=hook, do_bench=triton_bench)(_copy_kernel)
    x = torch.arange(8.0)
    y = torch.empty_like(x)
    tuned[lambda meta: (triton.cdiv(8, meta["BLOCK"]),)](x, y, 8)
    assert torch.equal(x, y)
    assert ("bench", 1) in seen and ("hook", 0) in seen and ("hook", 1) not in seen, seen
    assert tuned.do_bench is triton_bench and tuned.pre_hook is hook  # put back after the call

    def heuristic(nargs):  # @triton.heuristics: called by the autotuned Heuristics inside the benchmark too
        seen.append(("heuristic", census._STATE["in_launch"]))
        return 8

    seen.clear()
    both = triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], key=["n"],
                           do_bench=triton_bench)(triton.heuristics({"BLOCK": heuristic})(_copy_kernel))
    y = torch.empty_like(x)
    both[(1,)](x, y, 8)
    assert torch.equal(x, y) and ("bench", 1) in seen
    assert ("heuristic", 0) in seen and ("heuristic", 1) not in seen, seen

    s16 = ROOT / "tests" / "adversarial" / "s16"
    monkeypatch.undo()
    got = _evaluate(SPECS / "flip2d" / "spec.yaml", [s16 / "flip_autotuned_reset_to_zero_honest.py"], shapes=1)
    assert got["flip_autotuned_reset_to_zero_honest"][:3] == ("accepted", "", None), got


RT16B = ROOT / "tests" / "adversarial" / "redteam_s16b"


def test_red_team_s16b_doors_into_the_launch_exemption_are_labelled_and_honest_ones_are_not():
    """redteam_s16b's class-3 doors, each running the convolution in numpy inside a Triton launch's
    exemption: a pre-run hook (d1), do_bench passing for Triton's by a forged code file (d2), by __eq__
    (d3), through an Autotuner subclass (d7); launch arguments Triton reads with Python methods -- an int
    subclass (d4), a TensorDescriptor subclass (d5), a tuple subclass (d6), a pointer object behind a
    4100-item tuple (d8), a reinterpret wrapper's dtype (d9). Every one is labelled now; h4 (autotune
    with Triton's reset_to_zero, a Config pre_hook and its own do_bench) and h5 (a TensorDescriptor and a
    triton.reinterpret wrapper over plain tensors) stay unlabelled."""
    doors = ["d1_numpy_conv_in_a_pre_run_hook", "d2_numpy_conv_in_a_do_bench_whose_code_claims_tritons_file",
             "d3_numpy_conv_in_a_do_bench_equal_to_tritons", "d4_numpy_conv_in_an_int_subclass_scalar_argument",
             "d5_numpy_conv_in_a_tensor_descriptor_subclass_base", "d6_numpy_conv_in_a_tuple_subclass_argument",
             "d7_numpy_conv_in_do_bench_of_an_autotuner_subclass", "d8_pointer_object_behind_a_4100_item_tuple",
             "d9_numpy_conv_in_the_dtype_of_a_reinterpret_wrapper"]
    honest = ["h4_honest_autotune_wallclock_do_bench_config_pre_hook_reset_to_zero",
              "h5_honest_bias_tensor_descriptor_weight_reinterpret"]
    got = _evaluate(CONV, [RT16B / f"{n}.py" for n in doors + honest], shapes=1)
    for n in doors:
        verdict, reason, calls, _ = got[n]
        assert verdict == "rejected" or (calls and "host:" in calls), (n, verdict, reason, calls)
    for n in honest:
        assert got[n][:3] == ("accepted", "", None), (n, got[n][:3])


def test_outputs_written_later_through_a_weak_reference_or_made_shared_later_are_rejected():
    """redteam_s16b m1 (a weak reference to each output, the output of three calls ago zeroed while the
    caller still holds it) and m2 (the output moved to shared memory on the next call): every output of
    a shape is held and checked again once the shape's calls are over."""
    got = _evaluate(CONV, [RT16B / "m1_weakref_to_outputs_zeroed_three_calls_later.py",
                           RT16B / "m2_output_made_shared_on_the_next_call_then_zeroed.py"], shapes=2, trials=2)
    verdict, reason, _, _ = got["m1_weakref_to_outputs_zeroed_three_calls_later"]
    assert verdict == "rejected" and "changed after it was checked" in reason, (verdict, reason)
    verdict, reason, _, _ = got["m2_output_made_shared_on_the_next_call_then_zeroed"]
    assert verdict == "rejected" and "shared memory" in reason, (verdict, reason)
