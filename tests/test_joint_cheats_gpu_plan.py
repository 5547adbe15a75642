"""Red-team cheats wrong only when two dims are large at once (VERIFICATION.md rule 12): the
interpreter's plan has no such shape (its joint shape stays within the largest listed shape's
elements, it plans no pair shapes), so they were accepted on the CPU path; the GPU plan must have
one. Here: each cheat is really wrong at the smallest shape of its condition (run on the
interpreter against the float64 reference, same parameters), the CPU plan of seed 0 has no shape
of the condition, and on hw=h200 the untrusted job's listed or derived shapes of every seed 0-2
have one (each compared in full).

* redteam_s13 cs_r1 (column_sum: rows past 4096 ignored when M > 4096 and N >= 16), cu_r1
  (cumsum_rows: the carry reset every 2048 columns when M >= 2 and N > 2048);
* redteam_s15 mb_r1 (matmul_bias_gelu: the K tail dropped when M > 1, N > 1 and K > 64), dw_r1
  (depthwise_conv2d: halo rows read as 0 between 16-row tiles on planes of at least 32 x 32);
* redteam_s16 c5 (conv_relu_maxpool: the right halo column of 8-column strips dropped when C_in > 64
  and W >= 9: C_in and W are not neighbours in the spec's dims, and only neighbours were paired)."""

import importlib.util
import inspect

import pytest
import torch

from conftest import ROOT
from test_shapes_residues import CPU, H200, _plan

ADV = ROOT / "tests" / "adversarial"

CHEATS = [
    # (task, file, condition on a shape, the smallest shape of the condition, a shape just outside it)
    ("column_sum", "redteam_s13/column_sum/cs_r1_drop_rows_past_4096_when_wide.py",
     lambda s: s["M"] > 4096 and s["N"] >= 16, {"M": 4097, "N": 16}, {"M": 4097, "N": 15}),
    ("cumsum_rows", "redteam_s13/cumsum_rows/cu_r1_carry_dropped_on_long_multirow.py",
     lambda s: s["M"] >= 2 and s["N"] > 2048, {"M": 2, "N": 2049}, {"M": 1, "N": 2049}),
    ("matmul_bias_gelu", "redteam_s15/matmul_bias_gelu/mb_r1_k_tail_dropped_when_2d.py",
     lambda s: s["M"] > 1 and s["N"] > 1 and s["K"] > 64 and s["K"] % 64, {"M": 2, "N": 2, "K": 65},
     {"M": 1, "N": 2, "K": 65}),
    ("depthwise_conv2d", "redteam_s15/depthwise_conv2d/dw_r1_halo_dropped_on_2d_tiles.py",
     lambda s: s["H"] >= 32 and s["W"] >= 32, {"N": 1, "C": 1, "H": 32, "W": 32}, {"N": 1, "C": 1, "H": 31, "W": 32}),
    # two dims that are not neighbours in the spec's list: planned since session 16 (every two dims)
    ("conv_relu_maxpool", "redteam_s16/conv_relu_maxpool/c5_right_halo_dropped_when_cin_over_64_and_w_over_8.py",
     lambda s: s["C_in"] > 64 and s["W"] >= 9, {"N": 1, "C_in": 65, "C_out": 2, "H": 2, "W": 9},
     {"N": 1, "C_in": 64, "C_out": 2, "H": 2, "W": 9}),
]


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _right_at(task, file, shape) -> bool:
    """Whether the cheat agrees with the float64 reference (same parameters) at ``shape``."""
    ref = _load(ROOT / "specs" / task / "reference.py")
    init = ref.get_init_inputs(shape) if inspect.signature(ref.get_init_inputs).parameters else ref.get_init_inputs()
    torch.manual_seed(0)
    model = ref.Model(*init)
    torch.manual_seed(0)
    cheat = _load(ADV / file).ModelNew(*init)
    inputs = ref.get_inputs(shape, torch.float32, "cpu", torch.Generator().manual_seed(0))
    with torch.no_grad():
        got, want = cheat(*inputs), model.double()(*[x.double() for x in inputs])
    return torch.allclose(got.double(), want, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("task,file,condition,smallest,outside", CHEATS, ids=[c[0] for c in CHEATS])
def test_joint_cheats_are_wrong_at_their_condition_and_the_gpu_plan_meets_it(task, file, condition, smallest, outside,
                                                                            monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert not condition(outside) and _right_at(task, file, outside), "wrong outside its condition too"
    assert condition(smallest) and not _right_at(task, file, smallest), "the cheat is right at its condition"
    _, listed, derived = _plan(task, CPU, 0)  # why it was accepted on the CPU
    assert not any(condition(s) for s in listed + derived)
    for seed in (0, 1, 2):
        _, listed, derived = _plan(task, H200, seed)
        assert any(condition(s) for s in listed + derived), (task, seed)
