"""Session 9: the holes of tests/adversarial/redteam_s8 that concern state a candidate keeps or host
code it runs -- each red-team cheat run through the real harness on the CPU path
(:func:`kernelsynth.jobs.evaluate` in this process, the task's CPU plan cut to a few listed shapes
and trials, no derived shapes), next to honest candidates that stay accepted:

* fo1 (a ring of 32 output buffers): rule 10, the candidate must not keep the outputs it returned;
* mm1 (an incremental memo on row/column checksums): rule 10's block exchange keeps every line's
  sum and position-weighted sum; rule 15's fresh inputs per timed call on compute-bound tasks;
* mc1 (float16 scales calibrated on the module's first call): rule 24's probe as a later call;
* lk1 (prepared parameters keyed on sum, argmax, argmin, max and min): rule 21's block exchange;
* conv cf1 / xent cf1 (numpy inside a grid callable / through ``__array_interface__``): rule 14
  labels them ``host:...``.
"""

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from conftest import ROOT
from kernelsynth.contract import timed_fresh
from kernelsynth.external import ExternalCandidate
from kernelsynth.hardware import Hardware
from kernelsynth.screen import host_access
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration
from kernelsynth.verify.inputs import EXCHANGE_ORDERS, apply_changes, exchange_orders, plan_exchange

RT8 = ROOT / "tests" / "adversarial" / "redteam_s8"
S9 = ROOT / "tests" / "adversarial" / "s9"
SPECS = ROOT / "specs"
CPU_HW = Hardware(target="cpu", device_name="cpu", interpret=True)


def _evaluate(spec_path, files, shapes=2, trials=1):
    """{file stem: (verdict, reason, library_calls)} of the real harness on the CPU plan of
    ``spec_path``: the first ``shapes`` listed shapes, ``trials`` trials, no derived shapes."""
    from kernelsynth.jobs import evaluate

    spec = load_spec(spec_path)
    ext = [ExternalCandidate(Path(f).stem, Path(f)) for f in files]
    jobs = [j for j in Exploration(trials=trials, baselines=False, sources=["external"]).plan(spec, CPU_HW, external=ext)
            if j.request.candidate.role == "external" and j.request.dtype == "float32"]
    out = {}
    for j in jobs:
        req = dataclasses.replace(j.request, verify_shapes=j.request.verify_shapes[:shapes], derived_shapes=[])
        res = evaluate(req)
        out[req.candidate.name] = (res.verdict, res.reason or "", res.library_calls)
    return out


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


# ------------------------------------------------------------------ fo1: outputs the candidate keeps
def test_a_ring_of_output_buffers_is_rejected_and_the_flip_ladder_accepted():
    got = _evaluate(SPECS / "flip2d" / "spec.yaml", [RT8 / "flip" / "fo1_output_ring_of_32_buffers.py",
                                                      SPECS / "flip2d" / "kernels" / "v1_single_pass.py"])
    verdict, reason, _ = got["fo1_output_ring_of_32_buffers"]
    assert verdict == "rejected" and "the candidate kept 11 of the 11 outputs it returned" in reason, reason
    assert got["v1_single_pass"] == ("accepted", "", None), got


# ------------------------------------------------------------------ mm1: incremental memo
@pytest.mark.parametrize("dtype, shape", [(torch.float32, (5, 9)), (torch.bfloat16, (2, 3, 5, 7)),
                                          (torch.int64, (6, 6)), (torch.float32, (7,))])
def test_block_exchange_keeps_every_line_sum_and_weighted_sum_and_the_values(dtype, shape):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 10, shape) if dtype == torch.int64 else (3 * torch.randn(shape, generator=g)).to(dtype)
    plant, exchange = plan_exchange([x], torch.Generator().manual_seed(2))
    before = x.clone()
    apply_changes([before], plant)
    after = before.clone()
    apply_changes([after], exchange)
    d = after.double() - before.double()
    # the block: Thue-Morse signs of a seeded order per dim (session 10: 2^k long, k in EXCHANGE_ORDERS)
    assert int((d != 0).sum()) in {2 ** sum(exchange_orders(shape, k))
                                   for k in range(EXCHANGE_ORDERS[0], EXCHANGE_ORDERS[1] + 1)}
    for dim in range(d.dim()):  # along every dim: each line's sum and position-weighted sum unchanged
        pos = torch.arange(d.shape[dim], dtype=torch.float64).view([-1 if k == dim else 1 for k in range(d.dim())])
        assert float(d.sum(dim).abs().max()) == 0.0
        if d.shape[dim] >= 4:
            assert float((d * pos).sum(dim).abs().max()) == 0.0
        if d.shape[dim] >= 8:  # and the second moment (session 10, redteam_s9 lm1)
            assert float((d * pos ** 2).sum(dim).abs().max()) == 0.0
    assert torch.equal(after.reshape(-1).sort().values, before.reshape(-1).sort().values)  # the values kept
    assert after.max() == before.max() and after.min() == before.min()


def test_an_incremental_memo_on_line_checksums_meets_the_block_exchange(tmp_path):
    """mm1 as written (it also keeps its last output, so the kept-output rule would reject it at the
    end) and with its memo cloned (only the block exchange can catch that one): both rejected by the
    exchange on the second listed shape; the ladder's v1 accepted, with the probe trials."""
    copy = tmp_path / "mm1_cloned_memo.py"
    src = (RT8 / "matmul" / "mm1_incremental_memo_on_row_and_column_checksums.py").read_text()
    copy.write_text(src.replace("self.memo = (y, xk, wk, bk)", "self.memo = (y.clone(), xk, wk, bk)"))
    assert copy.read_text() != src
    got = _evaluate(SPECS / "matmul_bias_gelu" / "spec.yaml",
                    [RT8 / "matmul" / "mm1_incremental_memo_on_row_and_column_checksums.py", copy,
                     SPECS / "matmul_bias_gelu" / "kernels" / "v1_fused_epilogue.py"])
    for name in ("mm1_incremental_memo_on_row_and_column_checksums", "mm1_cloned_memo"):
        verdict, reason, _ = got[name]
        assert verdict == "rejected" and "shape 5x7x9, trial 0: stale answer: after values of the input were " \
            "exchanged in place inside a block" in reason, (name, reason)
    assert got["v1_fused_epilogue"][:2] == ("accepted", ""), got


def test_timed_calls_get_fresh_inputs_on_compute_bound_tasks(monkeypatch):
    """Rule 15 without a GPU: the timing loop (``timing.time_ms`` replaced by 12 plain calls) gives
    every timed call of a compute-bound task a fresh draw (every element new), of a memory-bound
    one the rolling element; the last call's output is checked either way."""
    from kernelsynth import jobs

    assert [timed_fresh(load_spec(SPECS / t / "spec.yaml").work_model(load_spec(SPECS / t / "spec.yaml").timing_shape,
                                                                        "float32"))
            for t in ("matmul_bias_gelu", "conv_relu_maxpool", "causal_attention", "flip2d", "softmax_rows",
                      "depthwise_conv2d")] == [True, True, True, False, False, False]
    assert timed_fresh({"flops": None, "bytes": 10}) is None

    def fake_time_ms(fn, warmup_ms, rep_ms, repeats=2, before=None):
        for _ in range(12):
            before()
            fn()
        return {"p20_ms": 1.0, "median_ms": 1.0, "synced_ms": 1.0, "p80_ms": 1.0, "spread": 0.0, "medians_ms": [1.0]}

    monkeypatch.setattr(jobs.timing, "time_ms", fake_time_ms)

    class Recorder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x, w):
            self.seen.append((x.clone(), w.clone()))
            return x @ w

    class Ref(torch.nn.Module):
        def forward(self, x, w):
            return x @ w

    ref_mod = SimpleNamespace(get_inputs=lambda s, dt, dev, g: [torch.randn(s["M"], s["K"], generator=g, dtype=dt),
                                                                torch.randn(s["K"], s["N"], generator=g, dtype=dt)])
    policy = SimpleNamespace(dtype=torch.float32, device=torch.device("cpu"), guard=None, threads_before=None, precision=None,
                             tol={"atol": 1e-4, "rtol": 1e-4})
    for fresh, changed in ((True, lambda n, d: d > 0.99 * n), (False, lambda n, d: d <= 1)):
        p = SimpleNamespace(timing_shape={"M": 16, "N": 8, "K": 24}, seed=0, timed_fresh=fresh, comparison="allclose", probes=[],
                            tol=policy.tol, warmup_ms=1, rep_ms=1, timing_repeats=1, reference_ops=[])
        cand = Recorder()
        res = jobs._time(cand, Ref().double(), ref_mod, p, policy, out_dtype=torch.float32)
        assert res["median_ms"] == 1.0 and len(cand.seen) == 12
        for (x0, w0), (x1, w1) in zip(cand.seen, cand.seen[1:]):
            n, d = x0.numel() + w0.numel(), int((x0 != x1).sum() + (w0 != w1).sum())
            assert changed(n, d) or (not fresh and d <= 2 + 2 * 2048), (fresh, d)  # the probe call's region


# ------------------------------------------------------------------ mc1: the probe as a later call
def test_first_call_calibration_meets_the_probe_as_a_later_call():
    got = _evaluate(SPECS / "matmul_bias_gelu" / "spec.yaml",
                    [RT8 / "matmul" / "mc1_fp16_operands_scaled_at_first_call.py"], shapes=1)
    verdict, reason, _ = got["mc1_fp16_operands_scaled_at_first_call"]
    assert verdict == "rejected" and "shape 1x1x1, trial 0 (input-range probe: scale 131072): NaN where the " \
        "reference has none" in reason, reason


# ------------------------------------------------------------------ lk1: fingerprinted parameters
def test_parameters_keyed_on_sums_extrema_or_weighted_sums_meet_the_block_exchange():
    """lk1 (sum, argmax, argmin, max, min per tensor) and tests/adversarial/s9's (sum, position-
    weighted sum): both rejected on trial 1, whose weight is trial 0's (planted) with two values of
    a block exchanged; the ladder's v0 accepted."""
    got = _evaluate(SPECS / "layernorm" / "spec.yaml",
                    [RT8 / "layernorm" / "lk1_prepared_params_keyed_on_sum_and_argextrema.py",
                     S9 / "lk_prepared_params_keyed_on_sum_and_weighted_sum.py",
                     SPECS / "layernorm" / "kernels" / "v0_three_pass.py"], shapes=2, trials=2)
    for name in ("lk1_prepared_params_keyed_on_sum_and_argextrema", "lk_prepared_params_keyed_on_sum_and_weighted_sum"):
        verdict, reason, _ = got[name]
        assert verdict == "rejected" and "shape 3x37, trial 1: outside atol" in reason, (name, reason)
    assert got["v0_three_pass"][:2] == ("accepted", ""), got


# ------------------------------------------------------------------ cf1: host arithmetic
def test_host_access_names_in_the_source_are_labels():
    src = ('import numpy as np\nfrom numpy.ctypeslib import as_array\nclass M:\n    pass\n'
           'm = M(); m.__array_interface__ = {}\nd = {"__array_struct__": 1}\nx = np.frombuffer(b"")\n'
           '"""a docstring naming __array_interface__ is no door"""\ndef _flip_from_buffer_kernel(): pass\n')
    assert host_access(src) == ["host:__array_interface__", "host:__array_struct__", "host:ctypeslib",
                                "host:frombuffer"]
    assert host_access("def f(:") == []


def test_numpy_in_a_grid_callable_and_through_array_interface_are_labelled_host():
    conv = _evaluate(ROOT / "tests" / "adversarial" / "redteam_s7" / "specs" / "conv_relu_maxpool" / "spec.yaml",
                     [RT8 / "conv" / "cf1_numpy_inside_the_grid_callable.py"], shapes=1)
    assert conv["cf1_numpy_inside_the_grid_callable"] == ("accepted", "", "host:from_numpy,host:numpy"), conv
    xent = _evaluate(SPECS / "cross_entropy" / "spec.yaml",
                     [RT8 / "xent" / "cf1_numpy_through_data_ptr_array_interface.py",
                      RT8 / "xent" / "ch1_two_rows_per_program_online.py"], shapes=1)
    # the name in the source, and since session 10 the numpy calls that ran (census._numpy_profile)
    assert xent["cf1_numpy_through_data_ptr_array_interface"] == ("accepted", "", "host:__array_interface__,host:numpy"), \
        xent
    assert xent["ch1_two_rows_per_program_online"] == ("accepted", "", None), xent
    flip = _evaluate(SPECS / "flip2d" / "spec.yaml", [S9 / "fh_autotuned_grid_lambda.py"], shapes=1)
    assert flip["fh_autotuned_grid_lambda"] == ("accepted", "", None), flip  # autotune, heuristics, grid lambda


def test_a_process_memory_file_named_in_the_source_is_a_host_label():
    """redteam_s15 ce_f1 read the logits and wrote the loss through ``/proc/self/mem`` at
    ``data_ptr()`` (no torch door); the sandbox's worker is refused the file, an unsandboxed one is
    not, so the name is a label too (session 15)."""
    from kernelsynth.screen import host_access

    src = (ROOT / "tests/adversarial/redteam_s15/cross_entropy/ce_f1_proc_self_mem_host_math.py").read_text()
    assert host_access(src) == ["host:proc_mem"]
    assert host_access('open("/proc/%d/mem" % os.getpid(), "rb")') == ["host:proc_mem"]
    assert host_access('open(f"/proc/{pid}/task/{tid}/mem")') == []  # built at run time: a tripwire by names
    assert host_access('open("/proc/self/task/7/mem")') == ["host:proc_mem"]
    assert host_access('x = "/proc/meminfo"; y = "/proc/self/maps"') == []
    assert host_access('"""reads nothing through /proc/self/mem"""') == []  # a docstring is no door
    assert host_access("os.process_vm_readv") == ["host:process_vm_readv"]
