"""Red team s13's class-5 cheats (tests/adversarial/redteam_s13, VERIFICATION.md rule 12): cs_r1
(column_sum: rows past 4096 ignored when M > 4096 and N >= 16) and cu_r1 (cumsum_rows: the carry
reset every 2048 columns when M >= 2 and N > 2048) are wrong only when two dims are large at once.
The interpreter's plan has no such shape (both were accepted on the CPU: its joint shape stays
within the largest listed shape's elements and it plans no pair shapes), so the GPU plan must
have one. Here: each cheat is really wrong at the smallest shape of its condition (run on the
interpreter), and on hw=h200 the plan of every seed 0-2 has a verify shape that meets the
condition, in the untrusted job's listed or derived shapes (each one compared in full)."""

import importlib.util

import pytest
import torch

from conftest import ROOT
from test_shapes_residues import CPU, H200, _plan

RT13 = ROOT / "tests" / "adversarial" / "redteam_s13"

CHEATS = [
    # (task, file, condition on a shape, the smallest shape of the condition)
    ("column_sum", "column_sum/cs_r1_drop_rows_past_4096_when_wide.py",
     lambda s: s["M"] > 4096 and s["N"] >= 16, {"M": 4097, "N": 16}),
    ("cumsum_rows", "cumsum_rows/cu_r1_carry_dropped_on_long_multirow.py",
     lambda s: s["M"] >= 2 and s["N"] > 2048, {"M": 2, "N": 2049}),
]


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("task,file,condition,smallest", CHEATS, ids=[c[0] for c in CHEATS])
def test_joint_cheats_are_wrong_at_their_condition_and_the_gpu_plan_meets_it(task, file, condition, smallest,
                                                                            monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    spec, _, _ = _plan(task, CPU)
    ref = _load(ROOT / "specs" / task / "reference.py")
    cheat = _load(RT13 / file).ModelNew()
    g = torch.Generator().manual_seed(0)
    x, = ref.get_inputs(smallest, torch.float32, "cpu", g)
    got, want = cheat(x), ref.Model()(x.double())
    assert not torch.allclose(got.double(), want, atol=1e-3, rtol=1e-3), "the cheat is right at its condition"
    # the interpreter's plan has no shape of the condition: why it was accepted on the CPU
    _, listed, derived = _plan(task, CPU, 0)
    assert not any(condition(s) for s in listed + derived)
    for seed in (0, 1, 2):
        _, listed, derived = _plan(task, H200, seed)
        assert any(condition(s) for s in listed + derived), (task, seed)
