"""The verification protocol on the Triton interpreter: honest kernels pass, wrong ones fail."""

import pytest
import torch

from conftest import FIXTURES, FLIP2D
from kernelsynth.loading import import_file
from kernelsynth.verify import PoisonEmpty, VerificationFailure, VerifyPolicy, compare, shares_storage, verify

REF = import_file(FLIP2D / "reference.py")
SHAPES = [{"M": 1, "N": 1}, {"M": 3, "N": 130}, {"M": 67, "N": 1}, {"M": 5, "N": 33}]


def run_verify(model, dtype=torch.float32, shapes=SHAPES, trials=2):
    return verify(model, REF.Model(), REF.get_inputs, shapes,
                  VerifyPolicy(dtype=dtype, device=torch.device("cpu"), seed=0, comparison="exact", tol=None),
                  trials=trials)


@pytest.mark.parametrize("kernel", ["v0_two_pass", "v1_single_pass", "v2_packed_words"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
def test_honest_kernels_pass(kernel, dtype):
    model = import_file(FLIP2D / "kernels" / f"{kernel}.py").ModelNew(BLOCK_M=4, BLOCK_N=128)
    report = run_verify(model, dtype)
    assert report.trials == len(SHAPES) * 2 and report.max_abs_err == 0.0


def test_unwritten_column_is_caught_by_poisoned_outputs():
    model = import_file(FIXTURES / "faulty" / "kernels" / "skips_last_column.py").ModelNew()
    with pytest.raises(VerificationFailure, match=r"shape 3x130, trial 0: not bit-exact: 3 of 390"):
        run_verify(model, shapes=[{"M": 3, "N": 130}])


class _InPlace(torch.nn.Module):
    def forward(self, x):
        x.copy_(torch.flip(x, dims=[1]))
        return x


class _Subclass(torch.nn.Module):
    class T(torch.Tensor):
        pass

    def forward(self, x):
        return torch.flip(x, dims=[1]).as_subclass(self.T)


class _Stale(torch.nn.Module):
    """Answers the first input it ever saw."""

    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x):
        if self.cached is None:
            self.cached = torch.flip(x, dims=[1])
        return self.cached.clone()


class _Nondeterministic(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = torch.flip(x, dims=[1]).clone()
        if self.calls % 2 == 0:
            y.view(-1)[0] += 1
        return y


@pytest.mark.parametrize("model, reason", [
    (_InPlace(), "input 0 was modified"),
    (_Subclass(), "expected exactly torch.Tensor"),
    (_Stale(), "not bit-exact"),
    (_Nondeterministic(), "not deterministic"),
])
def test_cheats_are_rejected(model, reason):
    with pytest.raises(VerificationFailure, match=reason):
        run_verify(model, shapes=[{"M": 4, "N": 6}])


def test_wrong_dtype_and_shape():
    ref = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(VerificationFailure, match="dtype"):
        compare(ref.double(), ref, "exact", None)
    with pytest.raises(VerificationFailure, match="shape"):
        compare(ref.T, ref, "exact", None)


def test_exact_comparison_is_bitwise():
    ref = torch.tensor([0.0, float("nan")])
    compare(ref.clone(), ref, "exact", None)  # identical bits, NaN included
    with pytest.raises(VerificationFailure):
        compare(torch.tensor([-0.0, float("nan")]), ref, "exact", None)


def test_allclose_comparison():
    ref = torch.tensor([1.0, 2.0, float("nan")], dtype=torch.float64)
    tol = {"atol": 1e-5, "rtol": 1e-3}
    errs = compare(torch.tensor([1.0005, 2.0, float("nan")]), ref, "allclose", tol, torch.float32)
    assert errs["max_abs_err"] == pytest.approx(5e-4, rel=1e-3)
    with pytest.raises(VerificationFailure, match="outside"):
        compare(torch.tensor([1.1, 2.0, float("nan")]), ref, "allclose", tol, torch.float32)
    with pytest.raises(VerificationFailure, match="NaN"):
        compare(torch.tensor([1.0, 2.0, 0.0]), ref, "allclose", tol, torch.float32)


def test_poison_empty_fills_new_tensors():
    with PoisonEmpty():
        f = torch.empty(4)
        i = torch.empty_like(torch.zeros(3, dtype=torch.int32))
    assert torch.isnan(f).all()
    assert (i == torch.iinfo(torch.int32).min + 7).all()


def test_shares_storage():
    x = torch.zeros(10)
    assert shares_storage(x[2:5], x) and not shares_storage(x.clone(), x)


# ---------------------------------------------------------------- issue 4: protocol gaps closed
from kernelsynth.verify import layout_mismatch, run_reference, thread_ids  # noqa: E402

SOFTMAX_REF = import_file(FIXTURES.parent / "adversarial" / "references" / "softmax.py")


def test_legacy_constructors_and_resize_are_poisoned():
    with PoisonEmpty():
        legacy = [torch.Tensor(3, 4), torch.zeros(2).new(3, 4), torch.FloatTensor(3, 4)]
        grown = torch.ones(2).resize_(6)
    assert all(torch.isnan(t).all() for t in legacy)
    assert grown[:2].tolist() == [1.0, 1.0] and torch.isnan(grown[2:]).all()


def test_column_major_output_with_the_right_values_is_rejected():
    ref = torch.arange(12.0).reshape(3, 4)
    col = torch.empty_strided((3, 4), (1, 3))
    col.copy_(ref)
    assert torch.equal(col, ref)
    with pytest.raises(VerificationFailure, match=r"strides \(1, 3\) are not contiguous.*layout rule"):
        compare(col, ref, "exact", None)
    assert layout_mismatch(torch.empty_strided((3, 1), (1, 7)), torch.zeros(3, 1)) is None  # size-1 dims ignored
    assert layout_mismatch(torch.zeros(4, 3).t(), ref.t().contiguous().t()) is None  # a strided reference


class _LateWriter(torch.nn.Module):
    def forward(self, x):
        import threading
        import time

        y = torch.flip(x, dims=[1]).clone()
        threading.Thread(target=lambda: (time.sleep(0.05), y.zero_()), daemon=True).start()
        return y


class _SpoilsEarlierOutputs(torch.nn.Module):
    """Each call zeroes the output it returned two calls earlier (no thread involved)."""

    def __init__(self):
        super().__init__()
        self.outs = []

    def forward(self, x):
        if len(self.outs) >= 2:
            self.outs[-2].zero_()
        self.outs.append(torch.flip(x, dims=[1]).clone())
        return self.outs[-1]


def test_thread_left_running_is_rejected():
    with pytest.raises(VerificationFailure, match=r"thread\(s\) started by the candidate still running"):
        verify(_LateWriter(), REF.Model(), REF.get_inputs, [{"M": 3, "N": 5}],
               VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="exact", tol=None,
                            threads_before=thread_ids()), trials=1)


def test_output_changed_after_its_checks_is_rejected_at_the_end():
    with pytest.raises(VerificationFailure, match=r"shape 3x5, trial 1: the output changed after it was checked"):
        verify(_SpoilsEarlierOutputs(), REF.Model(), REF.get_inputs, [{"M": 3, "N": 5}, {"M": 4, "N": 6}],
               VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="exact", tol=None),
               trials=2, determinism=False)


class _SpoilsPreviousShape(torch.nn.Module):
    """Each call zeroes the output it returned on the call before (the previous shape's, when every
    shape gets one call)."""

    def __init__(self):
        super().__init__()
        self.last = None

    def forward(self, x):
        if self.last is not None:
            self.last.zero_()
        self.last = torch.flip(x, dims=[1]).clone()
        return self.last


def test_a_shapes_last_call_is_not_fingerprinted_and_later_writes_are_still_caught(monkeypatch):
    """Cost (issue 10): the kept-output fingerprints are taken only for outputs a later call of the same
    shape could change; the derived and timing groups' one-call shapes hashed outputs of up to 2^31
    elements for nothing. What those fingerprints guarded stays guarded: within a shape (trials 2),
    and across shapes by the settle re-check of every shape's last output."""
    from kernelsynth.verify import protocol

    hashed = []
    real = protocol.output_fingerprint
    monkeypatch.setattr(protocol, "output_fingerprint", lambda out: hashed.append(out.shape) or real(out))
    shapes = [{"M": 3, "N": 5}, {"M": 4, "N": 6}, {"M": 2, "N": 9}]
    policy = VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="exact", tol=None)
    honest = lambda: import_file(FLIP2D / "kernels" / "v1_single_pass.py").ModelNew(BLOCK_M=4, BLOCK_N=128)  # noqa: E731
    assert verify(honest(), REF.Model(), REF.get_inputs, shapes, policy, trials=1, determinism=False).trials == 3
    assert hashed == []  # one call per shape: nothing to fingerprint
    assert verify(honest(), REF.Model(), REF.get_inputs, shapes, policy, trials=2, determinism=False).trials == 6
    assert [tuple(s) for s in hashed] == [(3, 5), (4, 6), (2, 9)]  # trial 0 of each shape: trial 1 comes after it
    hashed.clear()
    verify(honest(), REF.Model(), REF.get_inputs, shapes[:1], policy, trials=1, determinism=True)
    assert [tuple(s) for s in hashed] == [(3, 5)]  # trial 0's output: the determinism calls come after it
    with pytest.raises(VerificationFailure, match=r"shape 3x5, trial 0: the output changed after it was checked "
                                                  r"\(work that lands after the call returned\)"):
        verify(_SpoilsPreviousShape(), REF.Model(), REF.get_inputs, shapes, policy, trials=1, determinism=False)
    with pytest.raises(VerificationFailure, match=r"shape 3x5, trial 1: an earlier output changed"):
        verify(_SpoilsPreviousShape(), REF.Model(), REF.get_inputs, shapes, policy, trials=2, determinism=False)


class _Jitter(torch.nn.Module):
    """A correct softmax whose last bits depend on the call (like float atomics)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return torch.softmax(x, dim=-1) * (1 + 1e-7 * (self.calls % 2))


def _verify_softmax(model, **kw):
    return verify(model, SOFTMAX_REF.Model(), SOFTMAX_REF.get_inputs, [{"M": 3, "N": 50}],
                  VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="allclose",
                               tol={"atol": 1e-5, "rtol": 1e-5}, **kw), trials=1)


def test_determinism_is_bitwise_unless_the_spec_declares_a_bound():
    with pytest.raises(VerificationFailure, match=r"not deterministic \(bitwise\)"):
        _verify_softmax(_Jitter())
    assert _verify_softmax(_Jitter(), determinism_tol={"atol": 0.0, "rtol": 1e-6}).trials == 1
    with pytest.raises(VerificationFailure, match=r"not deterministic \(within atol=0.0, rtol=1e-08\)"):
        _verify_softmax(_Jitter(), determinism_tol={"atol": 0.0, "rtol": 1e-8})


def test_allclose_reference_runs_in_float64_and_relative_error_is_recorded():
    x = torch.randn(3, 50)
    ref = run_reference(SOFTMAX_REF.Model(), [x], "allclose", torch.float32)
    assert ref.dtype == torch.float64 and x.dtype == torch.float32
    rep = _verify_softmax(SOFTMAX_REF.Model())
    assert 0 < rep.max_rel_err < 1e-6  # float32 softmax against its float64 reference


def test_derived_shapes_are_fresh_per_seed_and_cross_4096():
    from kernelsynth.shapes import derived_shapes

    listed = [{"M": 1, "N": 1}, {"M": 5, "N": 33}, {"M": 9, "N": 300}]
    a, b = derived_shapes(listed, 0), derived_shapes(listed, 1)
    assert a == derived_shapes(listed, 0) and a[1:] != b[1:]
    assert a[0] == b[0] == {"M": 1, "N": 4097}  # the cheapest listed shape with one dim above 4096
    for s in a[1:] + b[1:]:
        assert s not in listed and s["M"] <= 9 and s["N"] <= 300 and s["M"] * s["N"] <= 2700
    assert derived_shapes([{"M": 1, "N": 4097}], 0)[0] != {"M": 1, "N": 4097}  # no threshold shape needed


def test_tolerance_table_entries_cite_their_source():
    from kernelsynth.tolerance import TABLE, default_tolerance

    assert default_tolerance("data_movement", "float32") is None and default_tolerance("reduction", "int32") is None
    assert default_tolerance("conv", "float32")["atol"] == 5e-3 and "tf32_on_and_off(0.005)" in \
        default_tolerance("conv", "float32")["source"]
    assert default_tolerance("elementwise", "bfloat16") == {**TABLE["elementwise"]["bfloat16"]}
    assert all(e["source"] and e["atol"] >= 0 and e["rtol"] >= 0 for cls in TABLE.values() for e in cls.values())


def test_signal_guard_allows_only_self_and_children():
    import os
    import subprocess
    import sys

    from kernelsynth.sandbox import signal_allowed

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert signal_allowed(os.getpid()) and signal_allowed(child.pid)
        assert not signal_allowed(os.getppid()) and not signal_allowed(0) and not signal_allowed(-os.getpgrp())
    finally:
        child.kill()
        child.wait()


def test_nonfinite_outputs_must_be_nonfinite_where_the_reference_is_and_infinities_keep_their_sign():
    """Rule 6. Session 21 on the H200: redteam_s15 sb_h1 (honest softmax_backward, dx = y dy - y d)
    gave NaN where the reference's y (dy - d) gives -Inf for a planted y = +Inf (inf - inf); both
    forms are right for every finite input, so NaN and Inf may stand for each other where the
    reference is non-finite. A finite value there, a non-finite one where the reference is finite,
    or an infinity of the other sign still fails."""
    tol = {"atol": 1e-4, "rtol": 3e-5}
    y = torch.tensor([[0.25, float("inf"), 0.5]], dtype=torch.float64)
    dy = torch.tensor([[1.0, 2.0, -3.0]], dtype=torch.float64)
    d = (dy * y).sum(-1, keepdim=True)  # +inf
    ref = y * (dy - d)  # [-inf, -inf (inf * (2 - inf)), +inf]
    yf, dyf, df = y.float(), dy.float(), d.float()
    honest = yf * dyf - yf * df  # [-inf, NaN, +inf]
    assert torch.isnan(honest[0, 1]) and ref[0, 1] == float("-inf")
    compare(honest, ref, "allclose", tol, torch.float32)
    nan_ref = torch.tensor([1.0, float("nan")], dtype=torch.float64)
    compare(torch.tensor([1.0, float("inf")]), nan_ref, "allclose", tol, torch.float32)  # the reverse
    with pytest.raises(VerificationFailure, match="of the other sign"):
        compare(-ref.float(), ref, "allclose", tol, torch.float32)
    with pytest.raises(VerificationFailure, match="NaN where the reference has none"):
        compare(torch.tensor([1.0, 5.0]), nan_ref, "allclose", tol, torch.float32)
    with pytest.raises(VerificationFailure, match="NaN where the reference has none"):
        compare(torch.tensor([float("nan"), float("nan")]), nan_ref, "allclose", tol, torch.float32)
    with pytest.raises(VerificationFailure, match="Inf where the reference has none"):
        compare(torch.tensor([float("inf"), float("nan")]), nan_ref, "allclose", tol, torch.float32)
    with pytest.raises(VerificationFailure, match="Inf where the reference has none"):
        compare(torch.tensor([[0.0, float("-inf"), 7.0]]), ref, "allclose", tol, torch.float32)


class _PathByDtype(torch.nn.Module):
    """Like PyTorch's SDPA: float64 takes a contiguous path, float32 returns the same values in a
    transposed layout (the memory-efficient kernel's (B, S, H, D) memory for a (B, H, S, D) result)."""

    def forward(self, x):
        y = torch.softmax(x, dim=-1)
        return y if x.dtype == torch.float64 else y.t().contiguous().t()


def test_the_reference_s_own_layout_at_the_dtype_under_test_passes_and_others_do_not():
    """Session 26 (H100): the eager and torch.compile baselines of causal_attention float32 were
    rejected by the layout rule: the float64 reference (SDPA's math path) is contiguous, the float32
    one on the GPU is not. The reference's strides at the dtype under test are accepted too; a
    contiguous output still passes, a third layout still fails."""
    shapes = [{"M": 3, "N": 50}, {"M": 7, "N": 9}]
    policy = VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="allclose",
                          tol={"atol": 1e-5, "rtol": 1e-5})
    rep = verify(_PathByDtype(), _PathByDtype(), SOFTMAX_REF.get_inputs, shapes, policy, trials=2)
    assert rep.out_strides == {"3x50": (1, 3), "7x9": (1, 7)}
    assert verify(SOFTMAX_REF.Model(), _PathByDtype(), SOFTMAX_REF.get_inputs, shapes, policy, trials=2).trials == 4

    class Strided(torch.nn.Module):  # every other column of a wider buffer: neither layout
        def forward(self, x):
            buf = torch.empty(x.shape[0], 2 * x.shape[1])
            buf[:, ::2] = torch.softmax(x, dim=-1)
            return buf[:, ::2]

    with pytest.raises(VerificationFailure, match=r"not contiguous; the reference's are \(50, 1\) or, at the "
                                                  r"dtype under test, \(1, 3\) \(layout rule\)"):
        verify(Strided(), _PathByDtype(), SOFTMAX_REF.get_inputs, shapes, policy, trials=2)
    # without the job dtype's strides (an exact comparison, or an older caller) the rule is as before
    with pytest.raises(VerificationFailure, match=r"not contiguous.*layout rule"):
        compare(_PathByDtype()(torch.randn(3, 50)), torch.zeros(3, 50, dtype=torch.float64), "allclose",
                {"atol": 1e-5, "rtol": 1e-5}, torch.float32)


def test_a_nan_payload_mismatch_names_the_bits():
    """Session 26 (a new user's run of the README's screening example): honest/gather.py is rejected in
    bfloat16 on the CPU, where torch.gather canonicalises NaN payloads, and the reason said "got nan,
    expected nan". Values that print alike now carry their bits."""
    x = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.bfloat16)
    x.view(torch.int16)[0, 0] = 0x7F81  # a NaN with a payload, as rule 8's special values plant
    got = torch.gather(x, 1, torch.tensor([[0, 1, 2]]))
    ref = x.clone()
    if torch.equal(got.view(torch.int16), ref.view(torch.int16)):
        got.view(torch.int16)[0, 0] = 0x7FC0  # a build whose gather keeps payloads: the same mismatch by hand
    with pytest.raises(VerificationFailure, match=r"got nan \(0x[0-9a-f]{4}\), expected nan \(0x7f81\)"):
        compare(got, ref, "exact", None)
