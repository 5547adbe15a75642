"""Session 10: holes of tests/adversarial/redteam_s10 on the CPU path (fg1, sr2, lw1, sx1, xt1, rc1),
each red-team cheat run through the real harness (:func:`kernelsynth.jobs.evaluate` in this process,
the task's CPU plan cut to a few listed shapes and trials, no derived shapes), next to an honest
candidate that stays accepted:

* fg1 (an output returned with ``requires_grad=True``): rule 3's autograd state, in the worker and
  in the parent's audit (the digest carries the flags);
* sr2, lw1 (a lower precision or an approximation valid only on the distribution's range): rule 24's
  seeded scale probes;
* sx1 (NaN read as -inf): rule 8's NaN/Inf for ``allclose`` tasks;
* xt1 (class indices outside [0, V) never drawn): rule 24's integer wrap probe;
* rc1 (prepared weights cached on ``id(self)``): rule 21's trial built after the previous one died.
"""

import dataclasses
from pathlib import Path

import pytest
import torch

from conftest import ROOT
from kernelsynth.external import ExternalCandidate
from kernelsynth.hardware import Hardware
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration

RT10 = ROOT / "tests" / "adversarial" / "redteam_s10"
SPECS = ROOT / "specs"
CPU_HW = Hardware(target="cpu", device_name="cpu", interpret=True)


def _evaluate(spec_path, files, shapes=2, trials=1, dtype="float32", probes=None):
    """{file stem: (verdict, reason, library_calls, audit)} of the real harness on the CPU plan of
    ``spec_path``: the first ``shapes`` listed shapes, ``trials`` trials, no derived shapes; with
    ``probes`` (a predicate) only the spec's probes it keeps."""
    from kernelsynth.jobs import evaluate

    spec = load_spec(spec_path)
    ext = [ExternalCandidate(Path(f).stem, Path(f)) for f in files]
    jobs = [j for j in Exploration(trials=trials, baselines=False, sources=["external"]).plan(spec, CPU_HW, external=ext)
            if j.request.candidate.role == "external" and j.request.dtype == dtype]
    out = {}
    for j in jobs:
        req = dataclasses.replace(j.request, verify_shapes=j.request.verify_shapes[:shapes], derived_shapes=[])
        if probes is not None:
            req = dataclasses.replace(req, probes=[q for q in req.probes if probes(q)])
        res = evaluate(req)
        out[req.candidate.name] = (res.verdict, res.reason or "", res.library_calls, res.audit)
    return out


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


# ------------------------------------------------------------------ fg1: autograd state of the output
def test_an_output_that_requires_grad_is_rejected_in_the_worker_and_the_audit():
    from kernelsynth.audit import audit_problem
    from kernelsynth.verify.transport import digest

    got = _evaluate(SPECS / "flip2d" / "spec.yaml", [RT10 / "flip" / "fg1_output_requires_grad_leaf.py",
                                                      SPECS / "flip2d" / "kernels" / "v1_single_pass.py"], shapes=1)
    verdict, reason, _, _ = got["fg1_output_requires_grad_leaf"]
    assert verdict == "rejected" and "requires_grad=True" in reason and "autograd rule" in reason, reason
    verdict, reason, calls, audit = got["v1_single_pass"]
    assert (verdict, reason, calls) == ("accepted", "", None), got
    assert all(d["requires_grad"] is False and d["grad_fn"] is False for d in audit.values())
    # the parent's independent check: the same bytes, the flags of fg1's output -> rejected there too
    y = torch.arange(6.0).reshape(2, 3)
    refs = {"listed:0:0": {"where": "shape 2x3, trial 0", "digest": digest(y, "exact")}}
    assert audit_problem({"listed:0:0": digest(y.clone(), "exact")}, refs, "exact", None) is None
    leaf = y.clone().requires_grad_()
    problem = audit_problem({"listed:0:0": digest(leaf, "exact")}, refs, "exact", None)
    assert problem and "requires_grad=True" in problem, problem
    problem = audit_problem({"listed:0:0": {**digest(y, "exact"), "requires_grad": False, "grad_fn": True}}, refs,
                            "exact", None)
    assert problem and "grad_fn" in problem, problem



# ------------------------------------------------------------------ sr2, lw1, xt1: rule 24's new probes
@pytest.mark.parametrize("task, cheat, honest, shapes", [
    ("softmax_rows", "softmax/sr2_bf16_exp_when_the_row_range_exceeds_26", "v1_fused_row", 2),
    ("layernorm", "layernorm/lw1_rstd_by_newton_from_unit_variance", "v2_persistent_rows", 3),
    ("cross_entropy", "xent/xt1_target_modulo_skipped", "v2_online", 2),
])
def test_seeded_scale_and_wrap_probes_reject_the_cheat_and_accept_the_ladder(task, cheat, honest, shapes):
    """sr2 (bfloat16 exps past a row range of 26) meets softmax_rows' {scale: [4, 16]}; lw1 (Newton
    from unit variance) layernorm's {scale: [1/64, 64]}; xt1 (no target % V) cross_entropy's {wrap: 2}.
    The listed shapes the cheats' conditions need: lw1 acts on rows of 128 or more (layernorm's third)."""
    new = lambda q: "low" in q or q["kind"] == "wrap"  # only the probes of session 10: they alone reject
    got = _evaluate(SPECS / task / "spec.yaml", [RT10 / f"{cheat}.py", SPECS / task / "kernels" / f"{honest}.py"],
                    shapes=shapes, probes=new)
    verdict, reason, _, _ = got[Path(cheat).name]
    assert verdict == "rejected" and "probe" in reason, reason
    assert got[honest][:3] == ("accepted", "", None), got[honest][:2]



# ------------------------------------------------------------------ sx1: NaN and Inf for allclose tasks
NAN_AS_ZERO = """import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):  # sx1's class on layernorm: a NaN input read as 0, an Inf as a big number
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))  # drawn as the reference draws them
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        return F.layer_norm(torch.nan_to_num(x), x.shape[-1:], self.weight, self.bias, 1e-5)
"""


def test_nan_and_inf_are_planted_for_an_allclose_task_that_propagates_them(tmp_path):
    """Rule 8 for ``allclose``: trial 1 of each listed shape gets NaN and +-Inf (redteam_s10 sx1's
    class: a NaN read as a number gives a finite row where the reference's is NaN); layernorm's
    ladder (v2) propagates them and stays accepted. softmax_rows opts out (its ladder's clamped exp
    drops a NaN, as sx1 does: spec ``nonfinite:``)."""
    from kernelsynth.verify.inputs import plant_nonfinite

    cheat = tmp_path / "nan_as_zero.py"
    cheat.write_text(NAN_AS_ZERO)
    got = _evaluate(SPECS / "layernorm" / "spec.yaml", [cheat, SPECS / "layernorm" / "kernels" / "v2_persistent_rows.py"],
                    shapes=2, trials=2, probes=lambda q: False)
    verdict, reason, _, _ = got["nan_as_zero"]
    assert verdict == "rejected" and "trial 1" in reason and "NaN where the reference has none" in reason, reason
    assert got["v2_persistent_rows"][:2] == ("accepted", ""), got["v2_persistent_rows"][:2]
    y = plant_nonfinite(torch.zeros(9, 37), torch.Generator().manual_seed(0))
    assert int(torch.isnan(y).sum()) == 1 and int((y == float("inf")).sum()) == 1 and int((y == -float("inf")).sum()) == 1
    rows = [r for r in range(9) if not bool(torch.isfinite(y[r]).all())]
    assert rows == [6, 7, 8]  # the last third only (rows 0-5 stay finite for rule 21), one value per row
    assert not load_spec(SPECS / "softmax_rows" / "spec.yaml").nonfinite
