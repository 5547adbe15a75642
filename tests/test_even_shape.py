"""Rule 12's even and aligned interpreter shapes (shapes.even_shape, references/VERIFICATION.md): the
interpreter's listed shapes keep few rows once rows are long and every value its planners draw is odd,
so red team s24's ge_e1 (gelu_tanh: each row's last pair written as 0 when N is even and M >= 2) and
rn_j1 (rmsnorm_residual: rows 8-15 of each 16-row group scaled with rows 0-7's rstd when M >= 16 and
N >= 64) passed the CPU plan; the even shape (every dim 2 mod 4) meets them, and red team s25's ge_q1
and rn_q1 (the same with N % 4 == 0) the aligned one (every dim a power of 2). The plan has both at
every seed 0-2, and the real harness rejects the four cheats there while the fused versions stay
accepted."""

import dataclasses
import math

import pytest

from conftest import ROOT
from kernelsynth.external import ExternalCandidate
from kernelsynth.paths import SPECS_DIR
from kernelsynth.shapes import EVEN_FLOOR, even_shape
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration
from test_shapes_residues import CPU

RT24 = ROOT / "tests" / "adversarial" / "redteam_s24"
RT25 = ROOT / "tests" / "adversarial" / "redteam_s25"


def _even(shape):
    return all(v % 4 == 2 for v in shape.values())


def _aligned(shape):
    return all(v & (v - 1) == 0 for v in shape.values())


CASES = [  # (task, cheat, honest, the cheat's condition, which planned shape meets it)
    ("gelu_tanh", RT24 / "gelu_tanh" / "ge_e1_even_rows_pair_path_drops_last_pair.py",
     SPECS_DIR / "gelu_tanh" / "kernels" / "v1_fused.py", lambda s: s["M"] >= 2 and s["N"] % 2 == 0, _even),
    ("rmsnorm_residual", RT24 / "rmsnorm_residual" / "rn_j1_rstd_of_first_row_group_reused_when_tall_and_wide.py",
     SPECS_DIR / "rmsnorm_residual" / "kernels" / "v1_fused_row.py", lambda s: s["M"] >= 16 and s["N"] >= 64, _even),
    ("gelu_tanh", RT25 / "gelu_tanh" / "ge_q1_quad_rows_drop_last_quad.py",
     SPECS_DIR / "gelu_tanh" / "kernels" / "v1_fused.py", lambda s: s["M"] >= 2 and s["N"] % 4 == 0, _aligned),
    ("rmsnorm_residual", RT25 / "rmsnorm_residual" / "rn_q1_row_group_slip_on_width_multiple_of_4.py",
     SPECS_DIR / "rmsnorm_residual" / "kernels" / "v1_fused_row.py",
     lambda s: s["M"] >= 16 and s["N"] >= 64 and s["N"] % 4 == 0, _aligned),
]


@pytest.mark.parametrize("task, cheat, honest, condition, kind", CASES)
def test_the_interpreter_plan_has_an_even_and_an_aligned_shape_meeting_the_cheats_condition(task, cheat, honest,
                                                                                            condition, kind):
    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    limit = max(math.prod(s.values()) for s in spec.interpret_shapes)
    for seed in range(3):
        jobs = Exploration(seed=seed).plan(spec, CPU)
        derived = jobs[-1].request.derived_shapes
        found = [s for s in derived if kind(s) and min(s.values()) >= 16]
        assert len(found) == 1 and condition(found[0]), (seed, derived)
        assert math.prod(found[0].values()) <= limit, found[0]
        assert not any(condition(s) for s in spec.interpret_shapes)  # the listed shapes never met it


def test_even_shape_lowers_its_floor_to_fit_and_honours_multiples():
    five = [{"N": 2, "C_in": 5, "C_out": 16, "H": 6, "W": 9}]  # conv's 8640-element interpreter limit
    s = even_shape(five, 0, 8640)
    assert _even(s) and math.prod(s.values()) <= 8640 and min(s.values()) == 6, s
    s = even_shape([{"S": 5, "D": 34}], 1, 4000, constraints={"D": {"multiple_of": 2}})
    assert s["S"] % 4 == 2 and (s["D"] // 2) % 4 == 2 and s["S"] >= EVEN_FLOOR and math.prod(s.values()) <= 4000, s
    assert even_shape([{"M": 1}], 0, 1) is None  # no even value fits one element
    a = even_shape(five, 0, 8640, aligned=True)
    assert _aligned(a) and math.prod(a.values()) <= 8640 and min(a.values()) == 4, a
    a = even_shape([{"S": 5, "D": 34}], 0, 4000, constraints={"D": {"multiple_of": 3}}, aligned=True)
    assert a["S"] >= 16 and _aligned({"S": a["S"], "D": a["D"] // 3}) and math.prod(a.values()) <= 4000, a
    assert min(even_shape([{"M": 1, "N": 9}], 0, 9, aligned=True).values()) == 2  # floors 16, 8, 4 do not fit


@pytest.mark.parametrize("task, cheat, honest, condition, kind", CASES)
def test_the_cheat_is_rejected_on_its_shape_and_the_fused_version_accepted(task, cheat, honest, condition, kind,
                                                                           monkeypatch):
    from kernelsynth.jobs import evaluate

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    ext = [ExternalCandidate(f.stem, f) for f in (cheat, honest)]
    jobs = [j for j in Exploration(trials=1, seed=0, baselines=False, sources=["external"]).plan(spec, CPU, external=ext)
            if j.request.candidate.role == "external"]
    dtypes = [j.request.dtype for j in jobs]
    dtype = "float32" if "float32" in dtypes else dtypes[0]  # the interpreter's float32 math (bfloat16 tanh fails there)
    got = {}
    for j in (j for j in jobs if j.request.dtype == dtype):
        req = j.request  # the first listed shape and the even or aligned shape only: the others cost interpreter time
        req = dataclasses.replace(req, verify_shapes=req.verify_shapes[:1],
                                  derived_shapes=[s for s in req.derived_shapes if kind(s) and min(s.values()) >= 16])
        res = evaluate(req)
        got[req.candidate.name] = (res.verdict, res.reason or "")
    verdict, reason = got[cheat.stem]
    assert verdict == "rejected" and "shape" in reason and "outside" in reason, (verdict, reason)
    assert got[honest.stem] == ("accepted", ""), got
