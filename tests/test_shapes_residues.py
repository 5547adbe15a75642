"""Rule 12's residues (references/VERIFICATION.md): every dim of every task reaches, in the verify
shapes of each hardware target, a large value that is odd, one that is 2 mod 4 and one that is
4 mod 8 (kernelsynth.shapes.residue_shapes). tests/adversarial/redteam_s7's s1, fs1 and ss1 (wrong
only at C_out = 2 mod 4, at N = 4 mod 8 above 300, at N = 2 mod 4 above 130) passed every shape
before, because every derived value was odd; here the real plan and the real harness reject them,
and honest candidates of the same red team stay accepted."""

import dataclasses
import json
import math
import re

import pytest

from conftest import ROOT
from kernelsynth.external import ExternalCandidate
from kernelsynth.hardware import Hardware
from kernelsynth.paths import SPECS_DIR
from kernelsynth.shapes import (LARGE_MIN, RESIDUE_PLAN, RESIDUES, THRESHOLD_DIM, is_large_ragged, residue,
                                residue_shapes, with_residue)
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration

RT7 = ROOT / "tests" / "adversarial" / "redteam_s7"
CPU = Hardware(target="cpu", device_name="cpu", interpret=True)
GPU = Hardware(target="h200", device_name="gpu", interpret=False, arch="sm_90")


def test_residue_and_with_residue():
    assert [residue(v) for v in (1, 7, 2, 6, 130, 4, 12, 300, 8, 16, 4096)] == [1, 1, 2, 2, 2, 4, 4, 4, 8, 8, 8]
    assert residue(24, 8) == 1 and residue(48, 8) == 2 and residue(96, 8) == 4 and residue(64, 8) == 8
    assert [with_residue(300, r) for r in RESIDUES] == [299, 298, 300]
    assert [with_residue(301, r, up=True) for r in RESIDUES] == [301, 302, 308]
    assert [with_residue(4097, r) for r in RESIDUES] == [4097, 4094, 4092]
    assert with_residue(100, 2, 8) == 80 and with_residue(100, 4, 8, up=True) == 160  # 8 x 10, 8 x 20
    assert with_residue(3, 4) <= 0


def _plan(task, hw, seed=0):
    """(listed, derived) of the first untrusted job Exploration.plan gives ``task`` on ``hw``."""
    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    job = next(j for j in Exploration(seed=seed, baselines=False).plan(spec, hw) if not j.request.candidate.trusted)
    return spec, list(job.request.verify_shapes), list(job.request.derived_shapes)


@pytest.mark.parametrize("task", ["flip2d", "softmax_rows", "conv_relu_maxpool", "rope", "matmul_bias_gelu"])
def test_every_dim_reaches_each_residue_at_a_large_value_on_each_target(task):
    """The planner's guarantee, read from the real plan: per dim, a value of each residue (of the
    value / multiple_of) that is large -- at least LARGE_MIN on the GPU; on the interpreter also
    above every listed value of the dim --, and a large value no tile modulus divides. The GPU plan
    has every residue in every run; the interpreter's has 2 of the 3 per dim (RESIDUE_PLAN): a large
    odd value always, and seeds 0, 1, 2 together have all 3."""
    assert RESIDUE_PLAN == {"interpret": 2, "gpu": 3}
    for hw in (CPU, GPU):
        union = {}
        for seed in (0, 1, 2):
            spec, listed, derived = _plan(task, hw, seed)
            shapes = listed + derived
            assert len({json.dumps(s, sort_keys=True) for s in shapes}) == len(shapes)  # no shape twice
            for n in listed[0]:
                mult = int((spec.constraints or {}).get(n, {}).get("multiple_of", 1))
                floor = max(LARGE_MIN, 1 + max(s[n] for s in listed)) if hw.interpret else LARGE_MIN
                got = {residue(s[n], mult) for s in shapes if s[n] >= floor} & set(RESIDUES)
                assert len(got) >= (2 if hw.interpret else 3) and 1 in got, (hw.target, seed, n, got)
                union.setdefault(n, set()).update(got)
                assert any(is_large_ragged(s[n], multiple_of=mult) for s in shapes), (hw.target, n)
                assert all(s[n] % mult == 0 and s[n] >= (spec.constraints or {}).get(n, {}).get("min", 1)
                           for s in derived)
        assert all(got == set(RESIDUES) for got in union.values()), (hw.target, union)


def test_residue_shapes_move_values_down_and_keep_the_budgets_and_the_4096_crossing():
    listed = [{"M": 3, "N": 5}, {"M": 4, "N": 67}]
    derived = [{"M": 1, "N": 4097}, {"M": 3001, "N": 901}, {"M": 701, "N": 2301}, {"M": 261, "N": 257}]
    fits = lambda s: math.prod(s.values()) <= 10**6  # noqa: E731
    out = residue_shapes(listed, derived, 0, 8192, fits)
    assert out[0] == {"M": 1, "N": 4097}  # 4094 and 4092 would not cross 4096 any more
    for old, new in zip(derived, out):  # moved down, by less than 8, never below LARGE_MIN when it was above
        assert all(0 <= old[n] - new[n] < 8 and (new[n] >= LARGE_MIN or old[n] < LARGE_MIN) for n in old)
    for n in ("M", "N"):
        assert {residue(s[n]) for s in out if s[n] >= LARGE_MIN} >= set(RESIDUES), (n, out)
    assert all(fits(s) for s in out[len(derived):])
    # nothing large to move: every residue comes from added shapes, within the budget, others at 1
    added = residue_shapes(listed, [], 0, 300, fits, above_listed=True, pack=False)
    assert sorted((n, residue(s[n])) for s in added for n in s if s[n] > 67) == \
        [("M", 1), ("M", 2), ("M", 4), ("N", 1), ("N", 2), ("N", 4)]
    assert all(sorted(s.values())[0] == 1 for s in added)
    assert residue_shapes(listed, [], 0, 300, lambda s: False) == []  # nothing fits: nothing added


def test_residue_shapes_cover_two_of_three_on_the_interpreter_and_rotate_the_one_left_out():
    """cover=2 (RESIDUE_PLAN["interpret"]): each dim gets a large odd value and one large value of
    2 mod 4 or 4 mod 8, in turn with the seed and the dim, so that seeds 0 and 1 cover all 3."""
    listed = [{"M": 3, "N": 5}, {"M": 4, "N": 67}]
    fits = lambda s: math.prod(s.values()) <= 2**20  # noqa: E731
    left_out = {}
    for seed in (0, 1, 2):
        added = residue_shapes(listed, [], seed, 300, fits, above_listed=True, pack=False, cover=2)
        assert len(added) == 4
        for n in ("M", "N"):
            got = {residue(s[n]) for s in added if s[n] > 67}
            assert len(got) == 2 and 1 in got, (seed, n, added)
            left_out.setdefault(n, set()).update(set(RESIDUES) - got)
            if seed == 1:  # seeds 0 and 1 left out different residues
                assert left_out[n] == {2, 4}, left_out
        full = residue_shapes(listed, [], seed, 300, fits, above_listed=True, pack=False)
        assert len(full) == 6 and all(s in full for s in added)  # the same draws: a subset of the full plan
    assert left_out == {"M": {2, 4}, "N": {2, 4}}, left_out


def test_plan_shape_counts_stay_small():
    """The residues come mostly from moving values already drawn: on the GPU flip2d keeps its
    3 derived shapes, softmax_rows gains 1 (3 -> 4), conv_relu_maxpool 3 (8 -> 11); the
    interpreter adds shapes of one large dim and about 300-4100 elements each, one per dim for
    these tasks (odd and one other residue: flip2d and softmax_rows 4 -> 6, conv_relu_maxpool 7 -> 12;
    all 3 would be 8 and 17). On the GPU the
    higher valuations and long values (shapes.extreme_shapes, packed across dims) add 10 shapes to
    flip2d and softmax_rows (2 dims: 8 classes and a long value each) and 32 to
    conv_relu_maxpool (5 dims, one to three large together within the budget; 22 when packed by
    the large values' keys alone, session 10, which cost 7 new specialisation keys: packed on
    tuples of keys the other shapes have, 10 more small shapes and 1 new key, cost11), none on the
    interpreter. Since session 16 every two dims get a pair shape on the GPU, not only neighbours
    (redteam_s16 c5): conv_relu_maxpool's 5 dims 3 more (C_in x W and the like; the others are
    already large together in the all-dims shape or do not fit). Since session 25 the interpreter
    adds one even shape (every dim 2 mod 4, shapes.even_shape: redteam_s24 ge_e1, rn_j1) and one
    aligned shape (every dim a power of 2: redteam_s25 ge_q1, rn_q1): + 2 there."""
    counts = {(t, hw.target): len(_plan(t, hw)[2]) for t in ("flip2d", "softmax_rows", "conv_relu_maxpool")
              for hw in (CPU, GPU)}
    assert counts == {("flip2d", "cpu"): 6 + 2, ("flip2d", "h200"): 3 + 10, ("softmax_rows", "cpu"): 6 + 2,
                      ("softmax_rows", "h200"): 4 + 10, ("conv_relu_maxpool", "cpu"): 12 + 2,
                      ("conv_relu_maxpool", "h200"): 11 + 32 + 3}, counts
    for hw in (CPU,):
        for t in ("flip2d", "softmax_rows", "conv_relu_maxpool"):
            listed, derived = _plan(t, hw)[1:]
            added = [s for s in derived if sorted(s.values())[-2] <= 2]  # one large dim, the others 1 or 2
            assert all(math.prod(s.values()) <= 4 * (THRESHOLD_DIM + 8) for s in added)


def _evaluate(spec_path, files, derived, seed=0):
    """{file stem: (verdict, reason)} of the real harness (kernelsynth.jobs.evaluate, in this
    process: the red team's files are plain Triton) on the CPU plan of ``spec_path`` for each
    external candidate, one trial, the first listed shape and the derived shapes ``derived``
    accepts (the others cost interpreter time and test other rules), at the run ``seed``."""
    from kernelsynth.jobs import evaluate

    spec = load_spec(spec_path)
    ext = [ExternalCandidate(f.stem, f) for f in files]
    jobs = [j for j in Exploration(trials=1, seed=seed, baselines=False, sources=["external"]).plan(spec, CPU, external=ext)
            if j.request.candidate.role == "external" and j.request.dtype == "float32"]
    out = {}
    for j in jobs:
        req = j.request
        req = dataclasses.replace(req, verify_shapes=req.verify_shapes[:1],
                                  derived_shapes=[s for s in req.derived_shapes if derived(s)])
        res = evaluate(req)
        out[req.candidate.name] = (res.verdict, res.reason or "")
    return out


def test_flip_cheat_wrong_at_4_mod_8_above_300_is_rejected_and_honest_accepted(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    spec_path = SPECS_DIR / "flip2d" / "spec.yaml"
    got = _evaluate(spec_path, [RT7 / "flip" / "fs1_wrong_when_cols_4_mod_8_over_300.py",
                                RT7 / "flip" / "fh1_flat_index_divmod.py"],
                    lambda s: s["N"] > 300, _seed_with(spec_path, lambda s: s["N"] > 300 and s["N"] % 8 == 4))
    verdict, reason = got["fs1_wrong_when_cols_4_mod_8_over_300"]
    m, n = map(int, re.search(r"shape (\d+)x(\d+), trial 0: not bit-exact", reason).groups())
    assert verdict == "rejected" and n % 8 == 4 and n > 300, reason
    assert got["fh1_flat_index_divmod"] == ("accepted", ""), got


def test_softmax_cheat_wrong_at_2_mod_4_above_130_is_rejected_and_honest_accepted(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    spec_path = SPECS_DIR / "softmax_rows" / "spec.yaml"
    got = _evaluate(spec_path, [RT7 / "softmax" / "ss1_wrong_when_n_2_mod_4_over_130.py",
                                RT7 / "softmax" / "sh1_online_two_rows_per_program.py"],
                    lambda s: s["N"] > 130, _seed_with(spec_path, lambda s: s["N"] > 130 and s["N"] % 4 == 2))
    verdict, reason = got["ss1_wrong_when_n_2_mod_4_over_130"]
    m, n = map(int, re.search(r"shape (\d+)x(\d+), trial 0: outside atol", reason).groups())
    assert verdict == "rejected" and n % 4 == 2 and n > 130, reason
    assert got["sh1_online_two_rows_per_program"][0] == "accepted", got


def test_conv_cheat_wrong_at_cout_2_mod_4_is_rejected_and_honest_accepted(monkeypatch):
    """On the red team's conv spec (ladder v0, shapes and tolerances of the task's)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    two_mod_4 = lambda s: s["C_out"] % 4 == 2  # noqa: E731
    spec_path = RT7 / "specs" / "conv_relu_maxpool" / "spec.yaml"
    got = _evaluate(spec_path, [RT7 / "conv" / "s1_wrong_when_cout_2_mod_4.py",
                                RT7 / "conv" / "h1_direct_four_window_accumulators.py"], two_mod_4,
                    _seed_with(spec_path, two_mod_4))
    verdict, reason = got["s1_wrong_when_cout_2_mod_4"]
    c_out = int(re.search(r"shape \d+x\d+x(\d+)x\d+x\d+, trial 0: outside atol", reason).group(1))
    assert verdict == "rejected" and c_out % 4 == 2, reason
    assert got["h1_direct_four_window_accumulators"][0] == "accepted", got


def _plan_of(spec_path, seed=0):
    spec = load_spec(spec_path)
    job = next(j for j in Exploration(seed=seed, baselines=False).plan(spec, CPU) if not j.request.candidate.trusted)
    return job.request.derived_shapes


def _seed_with(spec_path, cheat_shape):
    """The first of seeds 0, 1, 2 whose CPU plan has a derived shape ``cheat_shape`` accepts (the
    interpreter's plan has odd and one other residue per dim, RESIDUE_PLAN; these seeds together
    have all 3: asserted here too)."""
    seed = next((s for s in (0, 1, 2) if any(cheat_shape(x) for x in _plan_of(spec_path, s))), None)
    assert seed is not None, "no CPU plan of seeds 0-2 has the residue"
    return seed


H200 = dataclasses.replace(GPU, total_mem_bytes=139 * 2**30)  # as torch reports an H200's memory


@pytest.mark.parametrize("task", ["flip2d", "softmax_rows", "matmul_bias_gelu", "conv_relu_maxpool"])
def test_gpu_plan_reaches_higher_valuations_and_long_values(task):
    """redteam_s8 ss1 (softmax wrong at N % 256 == 0, N % 1024 != 0), ms1 (matmul wrong at
    K % 64 == 32) and fs1 (flip wrong past 16384 columns unless N % 16384 == 0): on hw=h200 every dim
    reaches, at a value of at least 257, 8 mod 16 ... 128 mod 256, 256 and 512 mod 1024 and 1024 mod
    2048 (of the value / multiple_of), and a value past 2^16 (shapes.extreme_shapes), for several
    seeds; the CPU
    (interpreter) plan gets none of it (its shapes are _plan's on main)."""
    from kernelsynth.shapes import LONG_MIN, VALUATION_CLASSES, in_class

    for seed in (0, 1, 2):
        spec, listed, derived = _plan(task, H200, seed)
        shapes = listed + derived + [spec.timing_shape]
        for n in listed[0]:
            mult = int((spec.constraints or {}).get(n, {}).get("multiple_of", 1))
            for r, modulus in VALUATION_CLASSES:
                assert any(s[n] >= LARGE_MIN and in_class(s[n], r, modulus, mult) for s in shapes), (seed, n, r)
            assert any(s[n] >= LONG_MIN and s[n] % 2 == 1 for s in shapes), (seed, n)
        # the cheats' own conditions
        if task == "softmax_rows":
            assert any(s["N"] % 256 == 0 and s["N"] % 1024 and s["N"] > 256 for s in shapes)
        if task == "matmul_bias_gelu":
            assert any(s["K"] % 64 == 32 and s["K"] > 256 for s in shapes)
        if task == "flip2d":
            assert any(s["N"] > 16384 and s["N"] % 16384 for s in shapes)
    # the interpreter's plan has no long value and no value past the listed ones' classes
    _, listed, derived = _plan(task, CPU, 0)
    assert max(v for s in derived for v in s.values()) <= THRESHOLD_DIM + 8


def test_huge_shape_only_where_the_memory_allows():
    """redteam_s8 fs2 (flip2d with int32 offsets: wraps past 2^31 elements): on an H200 of known
    memory flip2d's every dtype gets one shape of more than 2^31 elements (float32: 17 GB in + out,
    x 4 copies within 60 % of 139 GiB); none without a known memory, none on an 80 GB device at
    4 bytes per element, none on the interpreter, none for an allclose task (its float64 reference
    and honest copies), none where the spec's bytes are below 2^31 elements' worth."""
    spec = load_spec(SPECS_DIR / "flip2d" / "spec.yaml")
    from kernelsynth.stages.exploration import huge_shapes

    for dtype in spec.dtypes:
        (shape,) = huge_shapes(spec, H200, dtype)
        assert math.prod(shape.values()) > 2**31 and all(v % 2 for v in shape.values()), shape
        assert spec.work_model(shape, dtype)["bytes"] * 4 <= 0.6 * 139 * 2**30
    jobs = [j for j in Exploration(seed=0, baselines=False).plan(spec, H200) if not j.request.candidate.trusted]
    assert all(any(math.prod(s.values()) > 2**31 for s in j.request.derived_shapes) for j in jobs)
    assert huge_shapes(spec, GPU, "float32") == [] and huge_shapes(spec, CPU, "float32") == []
    h100 = dataclasses.replace(GPU, target="h100", total_mem_bytes=80 * 10**9)
    assert huge_shapes(spec, h100, "float32") == [] and len(huge_shapes(spec, h100, "bfloat16")) == 1
    assert huge_shapes(load_spec(SPECS_DIR / "softmax_rows" / "spec.yaml"), H200, "bfloat16") == []
    # a product of dims past 2^31 whose tensors stay small (T x V x D of a gather): none
    assert huge_shapes(load_spec(SPECS_DIR / "embedding_gather" / "spec.yaml"), H200, "float32") == []


def test_gpu_extreme_shapes_add_no_specialisation_key_to_flip2d():
    """Cost (VERIFICATION.md "Cost per candidate"): session 9's valuation-class shapes gave flip2d
    (M, N) = (280, 272) and (1024, 1), whose (1 / multiple of 16 / other) keys no listed, derived
    or timing shape had, so every Triton kernel of every config compiled twice more inside
    verify_s. Packed by key, the H200 plan adds no key for flip2d and at most one for softmax_rows,
    while every dim still reaches every class (the test above). Packed on tuples of keys a shape
    already has (cost11: shapes.extreme_shapes, and residue_shapes' added shapes), softmax_rows and
    matmul_bias_gelu get none (1 and 3 before) and conv_relu_maxpool 2 (11 before: derived_shapes'
    fresh N = 1 shape, and N's classes of 256 mod 1024 and up, which fit no known tuple within the
    budget)."""
    from kernelsynth.shapes import spec_key

    for task, most, seeds in (("flip2d", 0, (0, 1, 2)), ("softmax_rows", 0, (0,)), ("matmul_bias_gelu", 0, (0,)),
                              ("conv_relu_maxpool", 2, (0,))):
        for seed in seeds:
            spec, listed, derived = _plan(task, H200, seed)
            keys = lambda shapes: {tuple(spec_key(s[n]) for n in listed[0]) for s in shapes}  # noqa: E731
            new = keys(derived) - keys(listed + [spec.timing_shape])
            assert len(new) <= most, (task, seed, sorted(new))
    assert [spec_key(v) for v in (1, 7, 16, 272, 280, 1024)] == [1, 0, 16, 16, 0, 16]
