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
