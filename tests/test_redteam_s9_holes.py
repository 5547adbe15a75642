"""Session 10: the holes of tests/adversarial/redteam_s9 on the CPU path -- each red-team cheat run
through the real harness (:func:`kernelsynth.jobs.evaluate` in this process, the task's CPU plan cut
to a few listed shapes and trials, no derived shapes), next to honest candidates that stay accepted
and cheats of our own in the same classes (tests/adversarial/s10):

* fa1 (outputs on a non-owning storage over a kept ring): rule 10, an output must lie in memory
  the call allocated, and the kept-output check follows that memory;
* sm1, lm1, rk2 (memos and prepared weights keyed on column checksums / second moments): rule 10's
  and rule 21's block exchange keeps line moments up to a seeded order (Thue-Morse signs), and
  runs on a listed shape whose every dim is long;
* ln1 (numpy through a name built at run time): rule 14 counts calls into numpy while the
  verified call runs (``host:numpy``).
"""

import dataclasses
import math
from pathlib import Path

import pytest
import torch

from conftest import ROOT
from kernelsynth.external import ExternalCandidate
from kernelsynth.hardware import Hardware
from kernelsynth.screen import screen_source
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration
from kernelsynth.verify import VerificationFailure
from kernelsynth.verify.census import Census, STORAGE_SET, install_watch, watching
from kernelsynth.verify.inputs import (EXCHANGE_ORDERS, apply_changes, exchange_extra, exchange_orders, plan_exchange,
                                       thue_morse)
from kernelsynth.verify.poison import call_poisoned, check_outputs_released, reset_returned

RT9 = ROOT / "tests" / "adversarial" / "redteam_s9"
S10 = ROOT / "tests" / "adversarial" / "s10"
SPECS = ROOT / "specs"
CPU_HW = Hardware(target="cpu", device_name="cpu", interpret=True)


def _evaluate(spec_path, files, shapes=2, trials=1, dtype="float32"):
    """{file stem: (verdict, reason, library_calls)} of the real harness on the CPU plan of
    ``spec_path``: the first ``shapes`` listed shapes, ``trials`` trials, no derived shapes."""
    from kernelsynth.jobs import evaluate

    spec = load_spec(spec_path)
    ext = [ExternalCandidate(Path(f).stem, Path(f)) for f in files]
    jobs = [j for j in Exploration(trials=trials, baselines=False, sources=["external"]).plan(spec, CPU_HW, external=ext)
            if j.request.candidate.role == "external" and j.request.dtype == dtype]
    out = {}
    for j in jobs:
        req = dataclasses.replace(j.request, verify_shapes=j.request.verify_shapes[:shapes], derived_shapes=[])
        res = evaluate(req)
        out[req.candidate.name] = (res.verdict, res.reason or "", res.library_calls)
    return out


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


# ------------------------------------------------------------------ fa1: outputs in memory the call owns
_RING = [torch.empty(64)]


def _fresh(x):
    return torch.empty_like(x).copy_(x)


def _view_of_kept(x):  # a slice of a buffer allocated before the call
    return _RING[0][:x.numel()].view(x.shape).copy_(x)


def _raw_storage_over_kept(x):  # fa1's door: a non-owning storage over a kept buffer
    st = torch._C._construct_storage_from_data_pointer(_RING[0].data_ptr(), x.device, x.numel() * x.element_size())
    return torch.empty(0).set_(st, 0, tuple(x.shape), (x.shape[1], 1)).copy_(x)


def _own_offset_view(x):  # honest: a view of a block the call allocated
    return torch.empty(8 + x.numel())[8:].view(x.shape).copy_(x)


_GROWN = [torch.empty(0)]


def _resized_kept(x):  # a kept tensor grown by resize_: fresh memory, but the candidate holds its storage
    return _GROWN[0].resize_(x.shape).copy_(x)


@pytest.mark.parametrize("fn, fails", [(_fresh, None), (_own_offset_view, None),
                                       (_view_of_kept, "the candidate kept 1 of the 1 outputs"),  # owning: its storage
                                       (_raw_storage_over_kept, "does not lie in memory allocated during the call"),
                                       (_resized_kept, "the candidate kept 1 of the 1 outputs")])
def test_an_output_must_lie_in_memory_the_call_allocated_and_that_memory_be_released(fn, fails):
    reset_returned()
    x = torch.randn(4, 5)
    try:
        out = call_poisoned(fn, [x], torch.device("cpu"))
        assert torch.equal(out, x)
        del out
        check_outputs_released()
        assert fails is None
    except VerificationFailure as e:
        assert fails is not None and fails in str(e), str(e)
    finally:
        reset_returned()


def test_storage_doors_are_screened_and_set_onto_a_storage_is_labelled():
    found = screen_source("import torch\ns = torch._C._construct_storage_from_data_pointer(0, 'cpu', 4)\n"
                          "t = torch.from_file('/tmp/f', True, 4)\n")
    assert found == ["line 2: uses ._construct_storage_from_data_pointer", "line 3: uses .from_file"], found
    got = _evaluate(SPECS / "flip2d" / "spec.yaml",
                    [RT9 / "flip" / "fa1_output_ring_on_storage_torch_does_not_own.py",
                     S10 / "fk_kept_fresh_block_under_a_raw_storage.py", S10 / "fh_offset_view_of_its_own_block.py",
                     ROOT / "tests" / "adversarial" / "cpu" / "honest" / "flip_permuted.py",
                     SPECS / "flip2d" / "kernels" / "v1_single_pass.py"])
    verdict, reason, labels = got["fa1_output_ring_on_storage_torch_does_not_own"]
    assert verdict == "rejected" and "shape 1x1, trial 0: the output does not lie in memory allocated during the " \
        "call" in reason and labels == STORAGE_SET, got
    verdict, reason, labels = got["fk_kept_fresh_block_under_a_raw_storage"]  # fresh memory, kept by the candidate
    assert verdict == "rejected" and "the candidate kept 11 of the 11 outputs it returned" in reason, got
    for honest in ("fh_offset_view_of_its_own_block", "flip_permuted", "v1_single_pass"):
        assert got[honest] == ("accepted", "", None), got  # the interpreter's own set_ is no label


# ------------------------------------------------------------------ sm1, lm1, rk2: moments of a seeded order
@pytest.mark.parametrize("shape", [(37,), (9, 130), (3, 37), (2, 5, 16, 6, 9)])
def test_the_exchange_keeps_line_moments_up_to_its_drawn_order(shape):
    drawn = set()
    for seed in range(6):
        x = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
        plant, exchange = plan_exchange([x], torch.Generator().manual_seed(seed))
        before = x.clone()
        apply_changes([before], plant)
        after = before.clone()
        apply_changes([after], exchange)
        d = after.double() - before.double()
        n = int((d != 0).sum())
        order = next(k for k in range(EXCHANGE_ORDERS[0], EXCHANGE_ORDERS[1] + 1)
                     if n == 2 ** sum(exchange_orders(shape, k)))
        drawn.add(tuple(exchange_orders(shape, order)))
        assert n <= 4096 and torch.equal(after.reshape(-1).sort().values, before.reshape(-1).sort().values)
        for dim, o in enumerate(exchange_orders(shape, order)):
            pos = torch.arange(shape[dim], dtype=torch.float64).view([-1 if k == dim else 1 for k in range(d.dim())])
            for m in range(o):  # moments 0 .. o - 1 of every line along the dim (a dim without a factor: none)
                assert float((d * pos ** m).sum(dim).abs().max()) == 0.0, (shape, dim, m)
            if o:
                assert float((d * pos ** o).sum(dim).abs().max()) > 0.0  # and not the next one
    if max(shape) >= 32:
        assert len(drawn) > 1  # the order is drawn, not fixed
    assert [sum(t) for t in (thue_morse(3),)] == [0] and sum(j * j * t for j, t in enumerate(thue_morse(3))) == 0


def test_an_even_shape_gets_the_exchange_when_no_odd_one_is_long():
    plan = {t: [s for s in Exploration(trials=1, baselines=False).plan(load_spec(SPECS / t / "spec.yaml"),
                                                                        CPU_HW)[0].request.verify_shapes]
            for t in ("softmax_rows", "layernorm", "flip2d", "matmul_bias_gelu")}
    assert {t: exchange_extra(s) for t, s in plan.items()} == \
        {"softmax_rows": 2, "layernorm": 2, "flip2d": None, "matmul_bias_gelu": 2}, plan
    gpu = load_spec(SPECS / "softmax_rows" / "spec.yaml").verify_shapes  # 37x1001 is odd and long: no extra call
    assert exchange_extra(gpu) is None


def test_memos_and_prepared_weights_keyed_on_second_moments_or_columns_meet_the_exchange():
    soft = _evaluate(SPECS / "softmax_rows" / "spec.yaml",
                     [RT9 / "softmax" / "sm1_memo_on_column_checksums.py",
                      RT9 / "softmax" / "sh2_split_row_partials_two_kernels.py",
                      SPECS / "softmax_rows" / "kernels" / "v1_fused_row.py"], shapes=3)
    verdict, reason, _ = soft["sm1_memo_on_column_checksums"]
    assert verdict == "rejected" and "shape 5x130, trial 0: stale answer: after values of the input were exchanged" \
        in reason, reason
    assert soft["sh2_split_row_partials_two_kernels"][:2] == soft["v1_fused_row"][:2] == ("accepted", ""), soft
    norm = _evaluate(SPECS / "layernorm" / "spec.yaml",
                     [RT9 / "layernorm" / "lm1_incremental_memo_on_row_second_moments.py",
                      SPECS / "layernorm" / "kernels" / "v1_fused_row.py"], shapes=2)
    verdict, reason, _ = norm["lm1_incremental_memo_on_row_second_moments"]
    assert verdict == "rejected" and "shape 3x37, trial 0: stale answer: after values of the input were exchanged" \
        in reason, reason
    assert norm["v1_fused_row"][:2] == ("accepted", ""), norm
    rms = _evaluate(SPECS / "rmsnorm_residual" / "spec.yaml",
                    [RT9 / "rmsnorm" / "rk2_prepared_weight_keyed_on_second_moment.py",
                     RT9 / "rmsnorm" / "rh2_row_blocks_2d_tiles.py"], shapes=2, trials=2, dtype="bfloat16")
    verdict, reason, _ = rms["rk2_prepared_weight_keyed_on_second_moment"]
    assert verdict == "rejected" and "shape 3x37, trial 1: outside atol" in reason, reason
    assert rms["rh2_row_blocks_2d_tiles"][:2] == ("accepted", ""), rms


# ------------------------------------------------------------------ ln1: numpy by what ran
def test_calls_into_numpy_are_counted_while_the_verified_call_runs():
    import numpy as np

    install_watch()
    built = getattr(np, "as" + "array")
    for fn, labelled in ((lambda x: torch.from_dlpack(x) * 2, False), (lambda x: x * float(built([1.0]).sum()), True),
                         (lambda x: x * np.mean([1.0, 3.0]) / 2, True), (lambda x: x + math.fsum([0.0]), False)):
        census = Census()
        with watching(census, []):
            fn(torch.ones(3))
        assert ("host:numpy" in census) == labelled, (fn, census)
    census = Census()
    with watching(census, []):
        import sys

        getattr(sys, "set" + "profile")(None)  # the hook taken off: labelled too
    assert "host:setprofile" in census, census


def test_numpy_reached_through_runtime_built_names_is_labelled_host_numpy():
    got = _evaluate(SPECS / "layernorm" / "spec.yaml",
                    [RT9 / "layernorm" / "ln1_numpy_through_a_runtime_built_interface_name.py",
                     S10 / "ln_numpy_module_by_runtime_name.py",
                     SPECS / "layernorm" / "kernels" / "v2_persistent_rows.py"], shapes=1)
    assert got["ln1_numpy_through_a_runtime_built_interface_name"] == ("accepted", "", "host:numpy"), got
    assert got["ln_numpy_module_by_runtime_name"] == ("accepted", "", "host:numpy"), got
    assert got["v2_persistent_rows"] == ("accepted", "", None), got
