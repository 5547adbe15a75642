"""The verification protocol on the Triton interpreter: honest kernels pass, wrong ones fail."""

import pytest
import torch

from conftest import FIXTURES, FLIP2D
from kernelsynth.loading import import_file
from kernelsynth.verify import PoisonEmpty, VerificationFailure, compare, shares_storage, verify

REF = import_file(FLIP2D / "reference.py")
SHAPES = [{"M": 1, "N": 1}, {"M": 3, "N": 130}, {"M": 67, "N": 1}, {"M": 5, "N": 33}]


def run_verify(model, dtype=torch.float32, shapes=SHAPES, trials=2):
    return verify(model, REF.Model(), REF.get_inputs, shapes, dtype, torch.device("cpu"), trials=trials,
                  seed=0, comparison="exact", tol=None)


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
    errs = compare(torch.tensor([1.0005, 2.0, float("nan")]), ref, "allclose", tol)
    assert errs["max_abs_err"] == pytest.approx(5e-4, rel=1e-3)
    with pytest.raises(VerificationFailure, match="outside"):
        compare(torch.tensor([1.1, 2.0, float("nan")]), ref, "allclose", tol)
    with pytest.raises(VerificationFailure, match="NaN"):
        compare(torch.tensor([1.0, 2.0, 0.0]), ref, "allclose", tol)


def test_poison_empty_fills_new_tensors():
    with PoisonEmpty():
        f = torch.empty(4)
        i = torch.empty_like(torch.zeros(3, dtype=torch.int32))
    assert torch.isnan(f).all()
    assert (i == torch.iinfo(torch.int32).min + 7).all()


def test_shares_storage():
    x = torch.zeros(10)
    assert shares_storage(x[2:5], x) and not shares_storage(x.clone(), x)
