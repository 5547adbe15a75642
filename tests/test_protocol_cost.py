"""The protocol's per-candidate cost trims (session 11, cost11; references/VERIFICATION.md "Cost
per candidate"): each keeps what it replaced detecting or drawing."""

import traceback

import pytest
import torch


def _params(seed_fn, seed):
    seed_fn(seed)
    mods = torch.nn.Sequential(torch.nn.Conv2d(3, 5, 3), torch.nn.Linear(7, 4))
    return [p.detach().clone() for p in mods.parameters()] + [torch.randn(6), torch.rand(3)]


def test_seed_draws_gives_manual_seeds_parameters_and_queues_no_lazy_call(monkeypatch):
    from kernelsynth.jobs import seed_draws

    for seed in (0, 42, 2**40 + 3):
        want, got = _params(torch.manual_seed, seed), _params(seed_draws, seed)
        assert len(want) == len(got) == 6
        for w, g in zip(want, got):
            assert torch.equal(w, g)
    stacks = []
    original = traceback.format_stack
    monkeypatch.setattr(traceback, "format_stack", lambda *a, **k: stacks.append(1) or original(*a, **k))
    seed_draws(7)
    assert stacks == []  # no lazy seeding call queued for a device type never initialised here
    if not torch.cuda.is_initialized():  # what torch.manual_seed does on this path (the cost it removes)
        torch.manual_seed(7)
        assert stacks, "torch.manual_seed queued no lazy call: the comparison above shows nothing"
    for fn in (torch.manual_seed, seed_draws):  # the same error outside the range
        with pytest.raises(ValueError):
            fn(2**64)


class _Equal:
    """A replacement that claims equality with everything."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__

    def __call__(self, *a, **k):
        return None


def test_integrity_quick_pass_compares_by_identity_not_equality():
    from kernelsynth.verify import TamperingError, check_integrity, integrity_snapshot

    before = integrity_snapshot()
    original = torch.flip
    torch.flip = _Equal()
    try:
        with pytest.raises(TamperingError, match=r"torch\.flip"):
            check_integrity(before)
    finally:
        torch.flip = original
    check_integrity(before)
    del torch.flip  # deleted and bound again to the same object: names reordered, nothing replaced
    torch.flip = original
    check_integrity(before)
    torch.Tensor.flip_alias_cost11 = original  # a new attribute on a guarded class shadows a base's
    try:
        with pytest.raises(TamperingError, match="flip_alias_cost11"):
            check_integrity(before)
    finally:
        del torch.Tensor.flip_alias_cost11
    check_integrity(before)


def test_release_check_collects_young_cycles_first_and_still_fails_a_kept_output(monkeypatch):
    import gc

    from kernelsynth.verify import VerificationFailure
    from kernelsynth.verify import poison

    generations = []
    collect = gc.collect
    monkeypatch.setattr(poison.gc, "collect", lambda g=2: generations.append(g) or collect(g))

    class Node:
        pass

    poison.reset_returned()
    out = torch.zeros(64)
    poison.note_returned(out)
    a, b = Node(), Node()
    a.other, b.other, a.out = b, a, out  # only garbage holds it: a cycle of the last call
    del out, a, b
    assert poison.check_outputs_released() == 1 and generations == [1]  # no full collection
    generations.clear()
    kept = [torch.zeros(64)]
    poison.note_returned(kept[0])
    with pytest.raises(VerificationFailure, match="kept 1 of the 1 outputs"):
        poison.check_outputs_released()
    assert generations == [1, 2]  # still alive after the young ones: all generations, then the verdict


def test_checksum_read_back_once_is_the_documented_formula(monkeypatch):
    """transport._checksum reads every chunk's sums back in one host sync (cost11): the value is
    still the docstring's formula, computed here in Python over the bits, per dtype width."""
    from kernelsynth.verify import transport
    from kernelsynth.verify.comparison import _bits

    monkeypatch.setattr(transport, "CHECKSUM_CHUNK", 64)
    P = transport._PRIME
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        x = (torch.randn(10, 33, generator=torch.Generator().manual_seed(3)) * 100).to(dtype)
        bits = [int(b) for b in _bits(x).reshape(-1)]
        if x.element_size() > 4:
            bits = [b % P for b in bits]
        want = [0, 0]
        for k, m in enumerate(transport._MULTS):
            for c in range(0, len(bits), 64):
                chunk = sum(b * ((j * m + k + 1) % P + 1) % P for j, b in enumerate(bits[c:c + 64])) % P
                want[k] = (want[k] + chunk * (((c // 64) * m + k + 1) % P + 1)) % P
        assert transport._checksum(x) == want, dtype


def test_allclose_compare_reads_back_once_and_keeps_its_order_of_reasons():
    """compare (allclose) reads its three verdicts and two statistics back together (cost11): the
    reason is still the first class that fails (NaN, then Inf, then the tolerance) and the
    statistics are the largest error and its ratio to the largest finite |reference|."""
    from kernelsynth.verify import VerificationFailure, compare

    tol = {"atol": 1e-3, "rtol": 1e-3}
    ref = torch.tensor([1.0, -4.0, float("inf"), float("nan")], dtype=torch.float64)
    errs = compare(torch.tensor([1.0005, -4.002, float("inf"), float("nan")]), ref, "allclose", tol, torch.float32)
    assert errs["max_abs_err"] == pytest.approx(0.002, rel=1e-3)
    assert errs["max_rel_err"] == pytest.approx(0.002 / 4.0, rel=1e-3)
    for got, reason in (([2.0, 0.0, 1.0, 0.0], "NaN"), ([2.0, -4.0, 1.0, float("nan")], "Inf"),
                        ([2.0, -4.0, float("inf"), float("nan")], "outside")):
        with pytest.raises(VerificationFailure, match=reason):
            compare(torch.tensor(got), ref, "allclose", tol, torch.float32)
    empty = torch.zeros(0, 3, dtype=torch.float64)
    assert compare(torch.zeros(0, 3), empty, "allclose", tol, torch.float32) == {"max_abs_err": 0.0, "max_rel_err": 0.0}


def test_operator_leaves_are_pytrees_leaves_for_every_schema_container():
    """Session 15: PoisonEmpty walks an operator's arguments and outputs with ``poison._leaves``
    instead of ``torch.utils._pytree.tree_leaves`` (a third of a verified call's cost). The walk
    must find the same tensors for the containers an operator schema passes: nested lists and
    tuples (``Tensor[]``, ``Tensor?[]``), the kwargs dict, None and scalars, storages; and the
    fresh-storage record it feeds (rule 10) must see a tensor inside a tuple of results."""
    from torch.utils._pytree import tree_leaves

    from kernelsynth.verify.poison import PoisonEmpty, _held_storages, _leaves, _storage_ptr

    a, b, c = torch.randn(3), torch.randn(2, 2), torch.randn(4)
    for args, kwargs in [((a, [b, None, c], 2.5, torch.float32), {"out": (a,), "dim": [0, 1]}),
                         (([[a, b], (c,)],), None), ((), {}), ((a.untyped_storage(), "x"), {"k": {"n": b}})]:
        want = tree_leaves((args, kwargs or {}))
        assert list(_leaves((args, kwargs or {}))) == want
        assert _held_storages(args, kwargs) == {p for p in map(_storage_ptr, want) if p is not None}
    fresh: dict = {}
    with PoisonEmpty(set(), fresh):
        values, indices = torch.sort(torch.randn(5))  # a tuple of two fresh results
    assert {values.untyped_storage().data_ptr(), indices.untyped_storage().data_ptr()} <= set(fresh)


def test_numpy_profile_module_test_matches_numpy_and_its_submodules_only():
    """Session 15: the numpy profile hook's module test is one ``str.startswith`` with a tuple
    (it runs on every C call of a verified call); it must still take numpy and its submodules and
    nothing that merely starts with the same letters."""
    from kernelsynth.verify.census import _host_array_module

    for name in ("numpy", "numpy.linalg", "numpy._core.multiarray", "numpy.random.mtrand"):
        assert _host_array_module(name), name
    for name in ("numpyro", "torch", "builtins", "", None, 3, "mynumpy.x", "numpy_financial"):
        assert not _host_array_module(name), name
