"""The worker's memo of reference outputs (kernelsynth/verify/refmemo.py): what its key tells apart,
that a later job of the same worker gets the same references without computing them, and that a
job with a fresh worker neither uses nor leaves one."""

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from conftest import ROOT
from kernelsynth.hardware import Hardware
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration
from kernelsynth.verify.comparison import run_reference
from kernelsynth.verify.precision import HonestReferences
from kernelsynth.verify.refmemo import BUILD_ATTR, MAX_FINGERPRINT_ELEMENTS, ReferenceMemo, fingerprint

CPU_HW = Hardware(target="cpu", device_name="cpu", interpret=True)


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def test_the_fingerprint_tells_apart_one_element_a_move_a_layout_and_a_dtype():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 33, generator=g)
    base = fingerprint([x, 3])
    assert fingerprint([x.clone(), 3]) == base  # the same bits: the same key
    one = x.clone()
    one[17, 5] = torch.nextafter(one[17, 5], torch.tensor(float("inf")))  # one ulp of one element
    swapped = x.clone()
    swapped[0, 0], swapped[0, 1] = x[0, 1], x[0, 0]  # the same values, two of them moved
    others = [fingerprint([one, 3]), fingerprint([swapped, 3]), fingerprint([x.t().contiguous().t(), 3]),
              fingerprint([x.double(), 3]), fingerprint([x, 4]), fingerprint([x[1:], 3])]
    assert all(o != base for o in others), others
    assert len(set(others)) == len(others)
    assert fingerprint([torch.zeros(0), True]) == fingerprint([torch.zeros(0), True])
    assert fingerprint([torch.tensor([True, False])]) != fingerprint([torch.tensor([False, True])])


def test_a_tensor_too_large_to_fingerprint_is_not_memoised(monkeypatch):
    import kernelsynth.verify.refmemo as refmemo

    monkeypatch.setattr(refmemo, "MAX_FINGERPRINT_ELEMENTS", 100)
    assert fingerprint([torch.ones(100)]) is not None and fingerprint([torch.ones(101)]) is None
    assert MAX_FINGERPRINT_ELEMENTS >= 2**20


class _Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(1.5))
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return torch.tanh(x * self.w)


def test_a_memoised_reference_is_computed_once_per_build_and_input():
    memo = ReferenceMemo()
    memo.begin(True, torch.device("cpu"))
    first, second = _Counting(), _Counting()
    setattr(first, BUILD_ATTR, ("ref", 1))
    setattr(second, BUILD_ATTR, ("ref", 1))  # built the same way: the same outputs
    x = torch.randn(8, 5, generator=torch.Generator().manual_seed(1))
    a = run_reference(first, [x], "allclose", torch.float32, memo)
    b = run_reference(second, [x.clone()], "allclose", torch.float32, memo)
    assert a is b and (first.calls, second.calls) == (1, 0) and a.dtype == torch.float64
    y = x.clone()
    y[3, 2] += 1.0
    c = run_reference(second, [y], "allclose", torch.float32, memo)
    assert second.calls == 1 and not torch.equal(c, a)  # another input: computed
    other = _Counting()
    setattr(other, BUILD_ATTR, ("ref", 2))  # another build seed: computed
    run_reference(other, [x], "allclose", torch.float32, memo)
    plain = _Counting()  # no build attribute: never memoised
    run_reference(plain, [x], "allclose", torch.float32, memo)
    run_reference(plain, [x], "allclose", torch.float32, memo)
    assert (other.calls, plain.calls) == (1, 2)
    assert (memo.hits, memo.calls) == (1, 4)
    # rule 23's terms: kept under their own key, the same objects on a hit
    honest = HonestReferences("fp32", torch.float32)
    t1 = honest.terms(first, [x], a, memo)
    t2 = honest.terms(second, [x.clone()], a, memo)
    assert t1 is t2 and t1["dtype"] == torch.float32 and len(t1["honest"]) == 2
    memo.begin(False, torch.device("cpu"))  # a job with a fresh worker: emptied
    assert memo.entries == {} and memo.nbytes == 0
    assert memo.key(first, [x], "reference") is None


def test_a_held_input_list_is_fingerprinted_once_and_again_after_an_in_place_change(monkeypatch):
    import kernelsynth.verify.refmemo as refmemo

    memo = ReferenceMemo()
    memo.begin(True, torch.device("cpu"))
    model = _Counting()
    setattr(model, BUILD_ATTR, ("ref", 1))
    taken = []
    real = refmemo.fingerprint
    monkeypatch.setattr(refmemo, "fingerprint", lambda args: taken.append(1) or real(args))
    x = torch.randn(8, 5, generator=torch.Generator().manual_seed(1))
    args = [x]
    plain = memo.key(model, args, "reference")
    assert len(taken) == 1
    with memo.holding(args):
        assert memo.key(model, args, "reference") == plain
        assert memo.key(model, args, ("terms", "fp32")) == (plain[0], ("terms", "fp32"), plain[2])
        assert len(taken) == 2  # once for the block
        other = [x.clone()]  # another list (the same values): fingerprinted as outside the block
        assert memo.key(model, other, "reference") == plain and len(taken) == 3
        x.add_(1.0)  # changed in place: its version moved, so it is fingerprinted again
        changed = memo.key(model, args, "reference")
        assert changed != plain and changed == (plain[0], "reference", real([x])) and len(taken) == 4
        args[0] = x.clone()  # another tensor in the held list: again
        memo.key(model, args, "reference")
        assert len(taken) == 5
    memo.key(model, args, "reference")
    assert len(taken) == 6 and memo._held is None


def test_batched_output_hashes_are_each_tensors_own_and_groups_do_not_mix(monkeypatch):
    import kernelsynth.verify.refmemo as refmemo

    g = torch.Generator().manual_seed(3)
    a = torch.randn(4, 6, generator=g)
    xs = [a, a.clone(), a.flip(0), torch.randn(24, generator=g).to(torch.bfloat16),  # 24 elements: 3 dtypes
          torch.randint(-9, 9, (24,), generator=g, dtype=torch.int64), None, torch.randn(5, generator=g),
          torch.randn(3, 8, generator=g).t(), torch.zeros(24)]
    monkeypatch.setattr(refmemo, "BATCH_ELEMENTS", 23)  # the 24-element ones hashed alone, the 5-element one batched
    for cap in (23, 2**20):
        monkeypatch.setattr(refmemo, "BATCH_ELEMENTS", cap)
        got = refmemo.output_hashes(xs)
        for x, h in zip(xs, got):
            if x is None:
                assert h is None
            else:
                assert torch.equal(h, refmemo._hash(x)), (cap, x)
    got = refmemo.output_hashes(xs)
    assert not torch.equal(got[0], got[2]) and torch.equal(got[0], got[1])  # a move of values changes it


def test_the_memo_keeps_nothing_past_its_budget():
    memo = ReferenceMemo()
    memo.begin(True, torch.device("cpu"))
    memo.budget = 1000
    m = _Counting()
    setattr(m, BUILD_ATTR, ("b",))
    small, big = torch.randn(10), torch.randn(200)  # float64 outputs: 80 and 1600 bytes
    run_reference(m, [small], "allclose", torch.float32, memo)
    run_reference(m, [big], "allclose", torch.float32, memo)
    assert len(memo.entries) == 1 and memo.nbytes == 80
    run_reference(m, [big], "allclose", torch.float32, memo)
    assert m.calls == 3


def _ladder_job(spec_name, version="v1", seed=0, fresh=False):
    spec = load_spec(ROOT / "specs" / spec_name / "spec.yaml")
    jobs = [j for j in Exploration(trials=2, seed=seed, baselines=False).plan(spec, CPU_HW)
            if j.request.candidate.version == version and j.request.dtype == "float32"]
    req = jobs[0].request
    return dataclasses.replace(req, verify_shapes=req.verify_shapes[:2], derived_shapes=req.derived_shapes[:1],
                               fresh_worker=fresh)


def test_a_later_job_of_the_worker_meets_the_same_references_without_computing_them(monkeypatch):
    """Two ladder jobs of softmax_rows in one process (a worker): the second finds every reference
    computation of its protocol in the memo, never builds a reference model for them, and measures
    the same errors and precision; a job with a fresh worker uses none and empties it; another
    run seed misses."""
    import kernelsynth.jobs as jobs
    from kernelsynth.jobs import evaluate
    from kernelsynth.verify.refmemo import MEMO

    builds = []
    real = jobs._reference
    monkeypatch.setattr(jobs, "_reference", lambda *a, **k: builds.append(a[4:]) or real(*a, **k))
    MEMO.begin(False, torch.device("cpu"))
    req = _ladder_job("softmax_rows")
    first = evaluate(req)
    seeded = [b for b in builds if b and b[0] != jobs.INIT_SEED]  # the trials' references (not the op census's)
    del builds[:]
    second = evaluate(dataclasses.replace(req))
    assert seeded and not [b for b in builds if b and b[0] != jobs.INIT_SEED], builds
    assert first.verdict == second.verdict == "accepted", (first.reason, second.reason)
    assert first.reference_calls == second.reference_calls and first.reference_calls >= 10
    assert first.reference_hits < first.reference_calls // 2  # within one job few repeat
    assert second.reference_hits == second.reference_calls, (second.reference_hits, second.reference_calls)
    for f in ("trials", "max_abs_err", "max_rel_err", "precision_rms", "precision_honest_rms", "precision_bound",
              "precision_tail", "precision_low"):
        assert getattr(first, f) == getattr(second, f), f
    other_seed = evaluate(_ladder_job("softmax_rows", seed=1))
    assert other_seed.reference_hits < other_seed.reference_calls // 2
    fresh = evaluate(dataclasses.replace(req, fresh_worker=True))
    assert (fresh.reference_hits, fresh.reference_calls) == (None, None) and MEMO.entries == {}
    assert fresh.max_abs_err == first.max_abs_err and fresh.verdict == "accepted"
    off = evaluate(dataclasses.replace(req, reference_memo=False))
    assert off.reference_calls is None and off.max_abs_err == first.max_abs_err
    MEMO.begin(False, torch.device("cpu"))


def test_a_fresh_worker_job_starts_in_a_process_that_ran_no_other_job():
    """A job with ``fresh_worker`` (every external and generated candidate) goes to a worker that
    has run no job: before, it was replaced only after, so an external candidate could run where
    ladder candidates had run (and where the reference memo holds the answers of its trials)."""
    from kernelsynth.sandbox import Sandbox, SandboxSettings
    from kernelsynth.workers import WorkerPool

    pids = []
    with WorkerPool(1, sandbox=Sandbox(SandboxSettings(mode="off"))) as pool:
        jobs = [SimpleNamespace(fresh_worker=False), SimpleNamespace(fresh_worker=False),
                SimpleNamespace(fresh_worker=True)]
        results = list(pool.map("no_such_job", jobs, on_start=lambda i: pids.append(pool._workers[0].proc.pid)))
    assert [r.fault.value for _, r in results] == ["exception"] * 3
    assert pids[0] == pids[1], "two ordinary jobs did not share their worker"
    assert pids[2] != pids[1], "the job that asked for a fresh worker ran where another job had run"


def test_a_memo_switched_back_on_after_the_job_began_is_not_used(monkeypatch):
    """redteam_s13 sm_rm1 set ``MEMO.enabled = True`` at its import (after ``evaluate`` had turned
    the memo off for its fresh worker) and ``evaluate`` read the flag again afterwards, so the
    protocol asked the candidate's memo for its references (only the parent's audit caught it).
    The switch is now taken once, before the import."""
    from kernelsynth.jobs import evaluate
    from kernelsynth.verify.refmemo import MEMO

    real = MEMO.begin

    def hijacked(enabled, device):
        real(enabled, device)
        MEMO.enabled = True  # what the candidate's import did

    monkeypatch.setattr(MEMO, "begin", hijacked)
    res = evaluate(_ladder_job("softmax_rows", fresh=True))
    assert res.verdict == "accepted" and (res.reference_hits, res.reference_calls) == (None, None)
    assert MEMO.entries == {} and MEMO.calls == 0
    monkeypatch.undo()
    MEMO.begin(False, torch.device("cpu"))


class _Drawn(torch.nn.Module):
    """A reference model whose construction draws its parameters (counted)."""
    builds = 0

    def __init__(self, n=8):
        super().__init__()
        _Drawn.builds += 1
        self.lin = torch.nn.Linear(n, n)
        self.register_buffer("scale", torch.rand(n))


def test_a_kept_reference_model_is_handed_out_as_copies_built_once_per_key():
    """Session 30: with the memo on, the reference model of one build (its key) is built once and
    every caller -- the first too -- gets a deep copy: the same parameter and buffer values in
    storage of its own, so a kernel that writes into its weights changes its copy only; off, every
    call builds; past the budget nothing is kept; a model deepcopy refuses is built each time."""
    memo = ReferenceMemo()
    memo.begin(True, torch.device("cpu"))
    _Drawn.builds = 0

    def build():
        torch.manual_seed(7)
        return _Drawn()

    a = memo.module(("ref", 1), build)
    a.lin.weight.data.zero_()  # the first caller's copy, written to
    b = memo.module(("ref", 1), build)
    assert _Drawn.builds == 1
    fresh = build()
    assert torch.equal(b.lin.weight, fresh.lin.weight) and torch.equal(b.scale, fresh.scale)
    assert not torch.equal(a.lin.weight, b.lin.weight)
    assert b.lin.weight.data_ptr() != memo.module(("ref", 1), build).lin.weight.data_ptr()
    size = sum(t.numel() * t.element_size() for t in (*fresh.parameters(), *fresh.buffers()))
    assert memo.nbytes == size
    memo.module(("ref", 2), build)
    assert _Drawn.builds == 3 and len(memo.entries) == 2
    memo.module(None, build)  # no key: built, not kept
    assert _Drawn.builds == 4 and len(memo.entries) == 2

    memo.budget = memo.nbytes  # full: a new build is not kept, so built again next time
    memo.module(("ref", 3), build)
    memo.module(("ref", 3), build)
    assert _Drawn.builds == 6 and len(memo.entries) == 2

    class Uncopyable(_Drawn):
        def __deepcopy__(self, memo_):
            raise TypeError("no copies")
    memo.budget = 10**9
    got = [memo.module(("ref", 4), lambda: Uncopyable()) for _ in range(2)]
    assert _Drawn.builds == 6 + 2 and got[0] is not got[1] and len(memo.entries) == 2  # not kept: built per call

    memo.begin(False, torch.device("cpu"))  # off (a fresh worker's job): emptied, every call builds
    assert memo.entries == {} and memo.nbytes == 0
    memo.module(("ref", 1), build)
    memo.module(("ref", 1), build)
    assert _Drawn.builds == 10
