"""Red team s30 (tests/adversarial/redteam_s30/README.md): the census's per-call profiler (VERIFICATION.md
rule 14) against ranges a candidate opens, forges or switches off. Each candidate hides its library
operator from the dispatch mode, so only the profiler view can see it."""

import torch

from conftest import ROOT
from kernelsynth.verify.census import Census, _spans, install_watch, profiled_of
from kernelsynth.verify.failures import VerificationFailure
from kernelsynth.verify.poison import call_poisoned
from test_redteam_s8_holes import SPECS, _evaluate

RT30 = ROOT / "tests" / "adversarial" / "redteam_s30"


def test_a_range_left_open_in_a_launch_hides_nothing(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    flip = _evaluate(SPECS / "flip2d" / "spec.yaml", [RT30 / "flip" / "c4_open_range_in_grid_callable.py"])
    verdict, _, calls = flip["c4_open_range_in_grid_callable"]
    assert "flip" in (calls or "").split(","), flip  # accepted, but labelled: never a kernel record
    conv = _evaluate(SPECS / "conv_relu_maxpool" / "spec.yaml", [RT30 / "conv" / "c5_conv_open_range.py"])
    calls = (conv["c5_conv_open_range"][2] or "").split(",")
    assert {"convolution", "max_pool2d"} <= set(calls), conv


def test_forged_marks_a_restarted_session_and_removed_callbacks_fail_the_call(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    got = _evaluate(SPECS / "flip2d" / "spec.yaml", [RT30 / "flip" / f for f in (
        "c1_fake_launch_mark.py", "c2_restart_fake_call_mark.py", "c3_clear_callbacks.py")])
    for name, why, label in (("c1_fake_launch_mark", "did not open", "census:_record_function_with_args_enter"),
                             ("c2_restart_fake_call_mark", "did not open", "census:_disable_profiler_legacy"),
                             ("c3_clear_callbacks", "ended or replaced", "census:_clear_callbacks")):
        verdict, reason, calls = got[name]
        assert verdict == "rejected" and why in reason, (name, reason)
        assert label in (calls or ""), (name, calls)


def test_spans_pair_pushes_and_pops_by_handle():
    """A range opened inside another and never closed: the outer one still ends where it ended."""
    from kernelsynth.verify.census import _DISABLE_CPU, _ENABLE_CPU, _MARK_ENTER, _MARK_EXIT, _profiler_config

    x = torch.randn(8)
    _ENABLE_CPU(_profiler_config())
    outer = _MARK_ENTER("outer")
    kept = _MARK_ENTER("left_open")  # held: a handle freed ends its range
    _MARK_EXIT(outer)
    torch.add(x, 1)
    spans = {s.name: s for s in _spans(_DISABLE_CPU())}
    assert spans["outer"].end < spans["aten::add"].start, spans  # the add is after the outer range, not inside it
    assert spans["left_open"].end >= spans["aten::add"].end  # the open one ends at the session's end
    del kept


def test_the_harness_marks_alone_pass_and_a_counterfeit_fails():
    install_watch()
    x = torch.randn(4)
    census = Census()
    call_poisoned(lambda x: x * 2, [x], torch.device("cpu"), True, None, census)
    assert "mul" in profiled_of(census)
    enter = getattr(torch._C._autograd, "_record_function_with_args_" + "enter")
    leave = getattr(torch._C._autograd, "_record_function_with_args_" + "exit")

    def forged(x):
        leave(enter("kernelsynth::" + "candidate"))
        return x * 2

    try:
        call_poisoned(forged, [x], torch.device("cpu"), True, None, Census())
    except VerificationFailure as e:
        assert "kernelsynth::candidate: 1 recorded, 0 opened by the harness" in str(e), e
    else:
        raise AssertionError("a forged candidate mark passed")


def test_library_work_inside_a_launch_through_its_grid_defaults_or_another_thread_is_labelled(monkeypatch):
    """Red team s30b: the grid's __len__ (an object, or what a grid callable returns), a jit parameter's
    default bound inside the launch, and torch's inter-op pool during a launch."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    flip = _evaluate(SPECS / "flip2d" / "spec.yaml", [RT30 / "flip" / f for f in (
        "g1_grid_len_hidden_flip.py", "g3_callable_grid_returns_object.py", "d1_default_arg_data_ptr.py",
        "j2_jit_underscore_fork.py")])
    for name, label in (("g1_grid_len_hidden_flip", "host:launch_argument:_Grid"),
                        ("g3_callable_grid_returns_object", "host:launch_argument:_Grid"),
                        ("d1_default_arg_data_ptr", "host:launch_argument:_Ptr"),
                        ("j2_jit_underscore_fork", "flip")):
        assert label in (flip[name][2] or "").split(","), (name, flip[name])
    conv = _evaluate(SPECS / "conv_relu_maxpool" / "spec.yaml", [RT30 / "conv" / "g2_conv_grid_len.py"])
    assert "host:launch_argument:_Grid" in (conv["g2_conv_grid_len"][2] or ""), conv
