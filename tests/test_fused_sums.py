"""kernelsynth.verify.fused_sums: rule 23's per-trial sums in three Triton passes must give what
precision.trial_sums' PyTorch operations give -- every count exactly, every sum to rounding (another
summation order) -- on the interpreter, over random operands with every kind of element the
definitions treat apart: non-finite outputs, references and scales, zero, tiny and huge scales, outputs
exactly in the lower format, subnormals, masked-out elements, every option."""

import math

import pytest
import torch

from kernelsynth.verify import fused_sums
from kernelsynth.verify.precision import MAX_REDUCTION, TAIL_K, trial_sums


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def _operands(seed, n, dtype, n_honest):
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(n, generator=g, dtype=torch.float64) * 3
    s = (torch.rand(n, generator=g) + 0.05).float()
    o = (r + torch.randn(n, generator=g, dtype=torch.float64) * 1e-3).to(dtype)
    hs = [(r + torch.randn(n, generator=g, dtype=torch.float64) * 1e-4).to(dtype) for _ in range(n_honest)]
    pick = lambda k: torch.randint(0, n, (k,), generator=g)  # noqa: E731
    r[pick(5)] = float("nan")
    r[pick(3)] = float("inf")
    s[pick(4)] = 0.0
    s[pick(3)] = 1e-20          # below 2^-30 of the largest scale: left to the absolute tolerance
    s[pick(2)] = float("nan")
    s[pick(2)] = float("inf")
    s[pick(3)] = 1e-4           # under 2^-30 of the largest scale below (9.3e-4), above 2^-37 of it
    s[pick(1)] = 1e6            # the largest finite scale
    o[pick(4)] = float("nan")
    o[pick(2)] = float("-inf")
    o[pick(30)] = r[pick(30)].to(dtype)  # exact reference values (lower format for a few)
    low_valued = pick(40)
    o[low_valued] = o[low_valued].to(torch.float16).to(dtype)  # float16's mantissa: the lower-format count
    o[pick(3)] = 0.0
    if dtype in (torch.float32, torch.float64):
        o[pick(3)] = torch.finfo(dtype).tiny / 4  # subnormal: not normal
    for h in hs:
        h[pick(3)] = float("nan")
        h[low_valued[:20]] = o[low_valued[:20]]  # the honest output is in the lower format there too
    return o, r, s, hs, g


def _flat(v):
    """The numbers of one trial_sums field in order (None for an absent one)."""
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [v]


def _differences(want, got):
    """Every field where ``got`` is not ``want``: counts (ints) unequal, sums (floats) beyond 1e-12
    relative (another summation order), other values unequal, fields missing on either side."""
    out = [f"fields {sorted(set(want) ^ set(got))}"] if want.keys() != got.keys() else []
    for k in want.keys() & got.keys():
        x, y = _flat(want[k]), _flat(got[k])
        if len(x) != len(y) or any(
                (p != q) if not isinstance(p, float) or isinstance(p, bool) else
                not math.isclose(p, q, rel_tol=1e-12, abs_tol=1e-300) for p, q in zip(x, y)):
            out.append(f"{k}: {want[k]} != {got[k]}")
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("n_honest", [0, 1, 2])
def test_the_fused_passes_give_trial_sums_numbers(dtype, n_honest):
    for seed, n in ((0, 3001), (2, 5)):
        o, r, s, hs, g = _operands(seed + 10 * n_honest, n, dtype, n_honest)
        exclude = torch.rand(n, generator=g) < 0.1
        # every option on and off, in 6 of the 16 combinations (each option meets each other one both ways)
        combos = [(False, None, None, None), (True, 2.0 ** -16, 3e-4, exclude), (True, None, None, exclude),
                  (False, 2.0 ** -16, None, exclude), (False, None, 3e-4, None), (True, 2.0 ** -16, None, None)]
        for linear, relative, threshold, low_exclude in combos:
            kw = dict(threshold=threshold, slack=1e-5, linear=linear, room=8.0, relative=relative,
                      low_exclude=low_exclude)
            want = trial_sums(o, r, s, hs, **kw)
            got = fused_sums.fused_trial_sums(o, r, s, hs, tail_k=TAIL_K, max_reduction=MAX_REDUCTION, **kw)
            assert _differences(want, got) == [], (dtype, n_honest, seed, kw)
            if n > 1000:  # real numbers were compared: kept elements, a nonzero error sum, honest sums
                assert want["candidate"][1] > 0.9 * n and want["candidate"][0] > 0
                assert len(got["honest"]) == n_honest and all(c > 0 for _, c in got["honest"])


def test_the_comparison_of_the_two_paths_can_fail():
    """_differences names a count off by one, a sum off beyond rounding and a missing field."""
    want = {"candidate": (1.0, 10), "tail": (2, 10), "threshold": 0.5}
    assert _differences(want, dict(want)) == []
    assert _differences(want, {**want, "tail": (3, 10)}) == ["tail: (2, 10) != (3, 10)"]
    assert _differences(want, {**want, "candidate": (1.0 + 1e-9, 10)})[0].startswith("candidate")
    assert _differences(want, {**want, "candidate": (1.0 + 1e-15, 10)}) == []
    assert _differences(want, {"candidate": (1.0, 10), "tail": (2, 10)}) == ["fields ['threshold']"]


def test_the_counts_are_not_trivial():
    """The operands above reach every count: lower-format outputs left out where an honest output is
    in the lower format too, tails over a given threshold, relative tails, non-finite elements dropped."""
    o, r, s, hs, g = _operands(3, 3001, torch.float32, 2)
    got = fused_sums.fused_trial_sums(o, r, s, hs, 1e-4, 1e-5, False, 8.0, 2.0 ** -20, None, TAIL_K, MAX_REDUCTION)
    low, normal = got["low"]
    assert 0 < low < normal < 3001
    assert 0 < got["tail"][0] < got["tail"][1] < 3001
    assert 0 < got["rel"][0] < got["rel"][1] < 3001
    assert got["honest_tail"][0][0] < got["tail"][0]


def test_supported_takes_only_one_cuda_device_and_equal_shapes():
    t = torch.zeros(4)
    assert not fused_sums.supported(t, t.double(), t, [], None)  # the CPU keeps PyTorch's operations


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_the_fused_comparison_gives_compares_verdicts_and_maxima(dtype):
    """fused_compare's flags and maxima against compare's PyTorch rule: NaN or Inf where the reference
    has none (or the reverse, or an infinity of the other sign), an element outside the tolerance."""
    from kernelsynth.verify.comparison import compare
    from kernelsynth.verify.failures import VerificationFailure

    g = torch.Generator().manual_seed(7)
    r = torch.randn(2500, generator=g, dtype=torch.float64)
    r[[3, 99]] = float("nan")
    r[[5, 2400]] = torch.tensor([float("inf"), float("-inf")], dtype=torch.float64)
    base = r.to(dtype)
    tol = {"atol": 1e-5, "rtol": 1e-2}
    cases = {"ok": base.clone()}
    for name, index, value in (("nan", 10, float("nan")), ("inf", 11, float("inf")),
                               ("sign", 5, float("-inf")), ("far", 12, 1e3), ("nan_for_inf_ok", 5, float("nan")), ("ref_nan_out_finite", 3, 1.0)):
        cases[name] = base.clone()
        cases[name][index] = value
    for name, out in cases.items():
        flags = fused_sums.compare_flags(out, r, tol["atol"], tol["rtol"])
        try:
            got = compare(out, r, "allclose", tol, dtype)
            failed = None
        except VerificationFailure as e:
            failed = str(e)
        if name in ("ok", "nan_for_inf_ok"):
            assert failed is None and not any(flags[:3]), (name, failed, flags)
            assert flags[4] == got["max_abs_err"] and flags[4] / flags[3] == got["max_rel_err"], (name, flags, got)
        else:  # the first flag raised names its class, as compare's message does
            first = next(i for i in range(3) if flags[i])
            assert failed.startswith(("NaN", "Inf", "outside")[first]), (name, flags, failed)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.int8, torch.bool,
                                   torch.complex64])
def test_the_fused_hash_gives_the_pytorch_hash(dtype):
    """fused_sums.fused_hash (the GPU's memo fingerprints and kept-output hashes) gives the very int64
    pair refmemo's PyTorch operations give, over sizes that end mid-program and past one, for every
    word size (1, 2, 4 and 8 bytes: bool and int8, bfloat16, float32, float64 and complex64's float
    pairs), with negative words (sign extension) and values that overflow the products; a change of
    one element or a swap of two changes it."""
    from kernelsynth.verify import refmemo

    g = torch.Generator().manual_seed(3)
    for n in (1, 1023, 1024, 3000):
        if dtype == torch.bool:
            x = torch.rand(n, generator=g) > 0.5
        elif dtype == torch.int8:
            x = torch.randint(-128, 128, (n,), generator=g, dtype=torch.int8)
        else:
            x = (torch.randn(n, generator=g, dtype=torch.float64) * 1e30).to(dtype)
        want = refmemo._hash(x)
        w = refmemo._words(x, widen=False)
        got = fused_sums.fused_hash(w, refmemo._M1, refmemo._M2)
        assert got.dtype == torch.int64 and got.tolist() == want.tolist(), (dtype, n, got, want)
        if n > 1:
            y = x.clone()
            y[0], y[1] = x[1], x[0]
            z = x.clone()
            z[n // 2] = x[n // 2 - 1] if dtype != torch.bool else ~x[n // 2]
            for other in (y, z):
                if not torch.equal(other, x):
                    assert fused_sums.fused_hash(refmemo._words(other, widen=False), refmemo._M1,
                                                 refmemo._M2).tolist() != want.tolist()
