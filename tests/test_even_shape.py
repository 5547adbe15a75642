"""Rule 12's even interpreter shape (shapes.even_shape, references/VERIFICATION.md): the interpreter's
listed shapes keep few rows once rows are long and every value its planners draw is odd, so red team
s24's ge_e1 (gelu_tanh: each row's last pair written as 0 when N is even and M >= 2) and rn_j1
(rmsnorm_residual: rows 8-15 of each 16-row group scaled with rows 0-7's rstd when M >= 16 and N >= 64)
passed the CPU plan. The plan's even shape meets both conditions at every seed 0-2, and the real
harness rejects both cheats on it while the ladders' fused versions stay accepted."""

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
CASES = [
    ("gelu_tanh", RT24 / "gelu_tanh" / "ge_e1_even_rows_pair_path_drops_last_pair.py",
     SPECS_DIR / "gelu_tanh" / "kernels" / "v1_fused.py", lambda s: s["M"] >= 2 and s["N"] % 2 == 0),
    ("rmsnorm_residual", RT24 / "rmsnorm_residual" / "rn_j1_rstd_of_first_row_group_reused_when_tall_and_wide.py",
     SPECS_DIR / "rmsnorm_residual" / "kernels" / "v1_fused_row.py", lambda s: s["M"] >= 16 and s["N"] >= 64),
]


def _even(shape):
    return all(v % 4 == 2 for v in shape.values())


@pytest.mark.parametrize("task, cheat, honest, condition", CASES)
def test_the_interpreter_plan_has_an_even_shape_meeting_the_cheats_condition(task, cheat, honest, condition):
    spec = load_spec(SPECS_DIR / task / "spec.yaml")
    limit = max(math.prod(s.values()) for s in spec.interpret_shapes)
    for seed in range(3):
        jobs = Exploration(seed=seed).plan(spec, CPU)
        derived = jobs[-1].request.derived_shapes
        even = [s for s in derived if _even(s)]
        assert len(even) == 1 and condition(even[0]), (seed, derived)
        assert math.prod(even[0].values()) <= limit and min(even[0].values()) >= EVEN_FLOOR, even[0]
        assert not any(condition(s) for s in spec.interpret_shapes)  # the listed shapes never met it


def test_even_shape_lowers_its_floor_to_fit_and_honours_multiples():
    five = [{"N": 2, "C_in": 5, "C_out": 16, "H": 6, "W": 9}]  # conv's 8640-element interpreter limit
    s = even_shape(five, 0, 8640)
    assert _even(s) and math.prod(s.values()) <= 8640 and min(s.values()) == 6, s
    s = even_shape([{"S": 5, "D": 34}], 1, 4000, constraints={"D": {"multiple_of": 2}})
    assert s["S"] % 4 == 2 and (s["D"] // 2) % 4 == 2 and s["S"] >= EVEN_FLOOR and math.prod(s.values()) <= 4000, s
    assert even_shape([{"M": 1}], 0, 1) is None  # no even value fits one element


@pytest.mark.parametrize("task, cheat, honest, condition", CASES)
def test_the_cheat_is_rejected_on_the_even_shape_and_the_fused_version_accepted(task, cheat, honest, condition,
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
        req = j.request  # the first listed shape and the even shape only: the others cost interpreter time
        req = dataclasses.replace(req, verify_shapes=req.verify_shapes[:1],
                                  derived_shapes=[s for s in req.derived_shapes if _even(s)])
        res = evaluate(req)
        got[req.candidate.name] = (res.verdict, res.reason or "")
    verdict, reason = got[cheat.stem]
    assert verdict == "rejected" and "shape" in reason and "outside" in reason, (verdict, reason)
    assert got[honest.stem] == ("accepted", ""), got
