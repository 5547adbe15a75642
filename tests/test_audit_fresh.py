"""The parent's independent check (VERIFICATION.md rule 18) of the staleness check's first call on
an overwritten input (rule 10 step 2; rule 23 meters it in the worker since session 24). Until
session 28 that call was judged by the worker alone (red team s27's open note): its output is now
recorded under the audit group ``fresh`` and the oracle replays its inputs from the same generator
(``verify.protocol.refresh_inputs``). Through the real worker, oracle and audit on the CPU plan."""

import dataclasses

import pytest
import torch

from conftest import ROOT
from kernelsynth.external import ExternalCandidate
from kernelsynth.hardware import Hardware
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration

CPU_HW = Hardware(target="cpu", device_name="cpu", interpret=True)

# an honest softmax over float64 (more precise than the policy asks): accepted everywhere
HONEST = '''
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x.double(), dim=-1).to(x.dtype)
'''


@pytest.fixture()
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from kernelsynth.audit import audit_problem, expected_keys
    from kernelsynth.jobs import evaluate, oracle

    f = tmp_path / "honest_softmax.py"
    f.write_text(HONEST)
    spec = load_spec(ROOT / "specs" / "softmax_rows" / "spec.yaml")
    job = next(j for j in Exploration(trials=2, baselines=False, sources=["external"]).plan(
        spec, CPU_HW, external=[ExternalCandidate(f.stem, f)]) if j.request.candidate.role == "external")
    # four listed shapes: odd ones (the planted exchange block), even ones and exchange_extra's even one
    req = dataclasses.replace(job.request, derived_shapes=[], probes=[])
    assert len(req.verify_shapes) >= 4
    res = evaluate(req)
    assert (res.verdict, res.reason) == ("accepted", ""), res.reason
    refs = oracle(req)["references"]
    return req, res, refs, expected_keys, audit_problem


def test_every_listed_shapes_fresh_call_is_recorded_replayed_and_agrees(run):
    req, res, refs, expected_keys, audit_problem = run
    fresh = {f"fresh:{si}:0" for si in range(len(req.verify_shapes))}
    assert fresh <= set(expected_keys(req)) and fresh <= set(res.audit) and fresh <= set(refs)
    assert all("staleness check" in refs[k]["where"] for k in fresh)
    # the replay: the oracle's reference of the overwritten input is the worker's output (within the tolerance)
    assert audit_problem(res.audit, refs, "allclose", req.tol, req.precision) is None
    # and it is not trial 0's input again: the fresh references differ from trial 0's
    from kernelsynth.verify.transport import tensor_of
    for si in range(len(req.verify_shapes)):
        a, b = tensor_of(refs[f"fresh:{si}:0"]["digest"]), tensor_of(refs[f"listed:{si}:0"]["digest"])
        assert a.shape == b.shape and (a.numel() <= 1 or not torch.equal(a, b)), si


def test_a_wrong_or_rounded_fresh_output_the_worker_let_through_fails_the_audit(run):
    """What a candidate that subverts the worker's own verdict on that call (its meter is an object in
    the candidate's process) would hand the parent: a wrong element, or every fresh output kept to 16
    mantissa bits -- inside softmax float32's tolerance (rtol 3.05e-5), below its fp32 policy
    (redteam_s24 ge_r1 rounded only on a tensor it had seen before)."""
    req, res, refs, _, audit_problem = run
    from kernelsynth.verify.precision import truncate_mantissa
    from kernelsynth.verify.transport import digest, tensor_of

    si = max(range(len(req.verify_shapes)), key=lambda i: tensor_of(refs[f"fresh:{i}:0"]["digest"]).numel())
    wrong = dict(res.audit)
    out = tensor_of(wrong[f"fresh:{si}:0"]).clone()
    out.view(-1)[-1] += 0.5
    wrong[f"fresh:{si}:0"] = digest(out, "allclose")
    msg = audit_problem(wrong, refs, "allclose", req.tol, req.precision)
    assert msg and "staleness check's call" in msg and "outside atol" in msg, msg

    rounded = dict(res.audit)
    for k in (k for k in res.audit if k.startswith("fresh:")):
        rounded[k] = digest(truncate_mantissa(tensor_of(res.audit[k]), 16), "allclose")
    msg = audit_problem(rounded, refs, "allclose", req.tol, req.precision)
    assert msg and "listed shapes" in msg and "RMS" in msg, msg  # the fresh calls pool with the listed shapes, as in the worker



def test_the_later_staleness_calls_are_recorded_replayed_and_judged_by_the_audit(run):
    """Session 29 (red team s28 c3's last part): steps 3-5 of the staleness check -- element and region
    changes, permutation, exchange, nudge, bump -- were judged by the worker alone. Their outputs are recorded
    under group ``later`` and the oracle replays the steps (verify.protocol.later_steps) from the same
    generator: an honest candidate agrees on every one of them, a wrong element or 16-bit outputs that a
    subverted worker let through fail the audit."""
    req, res, refs, _, audit_problem = run
    from kernelsynth.verify.precision import truncate_mantissa
    from kernelsynth.verify.transport import digest, tensor_of

    later = {k for k in refs if k.startswith("later:")}
    # every listed shape's later steps: 2 or more each (even shapes: changes, permutation, nudge, bump; odd:
    # last and first element per input changed alone, exchange)
    assert {int(k.split(":")[1]) for k in later} == set(range(len(req.verify_shapes)))
    assert all(sum(k.startswith(f"later:{si}:") for k in later) >= 2 for si in range(len(req.verify_shapes)))
    assert later == {k for k in res.audit if k.startswith("later:")}
    assert all("the staleness check's call after" in refs[k]["where"] for k in later)
    assert any("rotated" in refs[k]["where"] for k in later) and any("last element" in refs[k]["where"] for k in later)
    assert audit_problem(res.audit, refs, "allclose", req.tol, req.precision) is None
    # each replayed step is its own input: consecutive references of a shape differ
    a, b = tensor_of(refs["later:2:0"]["digest"]), tensor_of(refs["later:2:1"]["digest"])
    assert a.shape == b.shape and not torch.equal(a, b)

    key = max(later, key=lambda k: tensor_of(refs[k]["digest"]).numel())
    wrong = dict(res.audit)
    out = tensor_of(wrong[key]).clone()
    out.view(-1)[0] += 0.5
    wrong[key] = digest(out, "allclose")
    msg = audit_problem(wrong, refs, "allclose", req.tol, req.precision)
    assert msg and "staleness check's call after" in msg and "outside atol" in msg, msg
    rounded = dict(res.audit)
    for k in later:
        rounded[k] = digest(truncate_mantissa(tensor_of(res.audit[k]), 16), "allclose")
    msg = audit_problem(rounded, refs, "allclose", req.tol, req.precision)
    assert msg and "listed shapes" in msg and "RMS" in msg, msg  # they pool with the listed shapes, as in the worker

# swiglu's get_inputs returning inputs that are not independent dense tensors (red team s28): the
# worker overwrites copies of them, and the oracle must replay on such copies too
_GET_INPUTS = {
    "overlapping_views": '''
    x = torch.randn((shape["M"], shape["N"] + 1), dtype=torch.float32, device=device, generator=generator).to(dtype)
    return [x[:, :-1], x[:, 1:]]''',
    "one_tensor_twice": '''
    x = torch.randn((shape["M"], shape["N"]), dtype=torch.float32, device=device, generator=generator).to(dtype)
    return [x, x]''',
    "expanded": '''
    a = torch.randn((shape["M"], shape["N"]), dtype=torch.float32, device=device, generator=generator).to(dtype)
    b = torch.randn((shape["N"],), dtype=torch.float32, device=device, generator=generator).to(dtype)
    return [a, b.expand(shape["M"], shape["N"])]''',
    "requires_grad": '''
    a = torch.randn((shape["M"], shape["N"]), dtype=torch.float32, device=device, generator=generator).to(dtype)
    b = torch.randn((shape["M"], shape["N"]), dtype=torch.float32, device=device, generator=generator).to(dtype)
    return [a.requires_grad_(), b]''',
}

HONEST_SWIGLU = '''
import torch
import torch.nn.functional as F


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        with torch.no_grad():
            return (F.silu(a.double()) * b.double()).to(a.dtype)
'''


@pytest.mark.parametrize("style", sorted(_GET_INPUTS))
def test_the_oracle_replays_the_overwrite_on_the_workers_copies(tmp_path, monkeypatch, style):
    """Red team s28 (on e3f6666): with inputs that share memory, are broadcast or require grad, the
    oracle overwrote the raw trial inputs -- other values than the worker's dense copies got (the
    views: every honest candidate failed the audit at the odd shapes), or an exception that stopped
    the task as if its reference were broken (the others)."""
    import re
    import shutil

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from kernelsynth.audit import audit_problem
    from kernelsynth.jobs import evaluate, oracle

    folder = tmp_path / f"sw_{style}"
    shutil.copytree(ROOT / "specs" / "swiglu", folder)
    ref = folder / "reference.py"
    text = ref.read_text()
    body = re.search(r"def get_inputs\(shape, dtype, device, generator\):\n(.*?)(?=\n\S|\Z)", text, re.S)
    assert body, "swiglu's get_inputs moved"
    ref.write_text(text[:body.start(1)] + _GET_INPUTS[style].lstrip("\n") + "\n" + text[body.end(1):])
    f = tmp_path / "honest_swiglu.py"
    f.write_text(HONEST_SWIGLU)
    spec = load_spec(folder / "spec.yaml")
    job = next(j for j in Exploration(trials=1, baselines=False, sources=["external"]).plan(
        spec, CPU_HW, external=[ExternalCandidate(f.stem, f)]) if j.request.candidate.role == "external")
    req = dataclasses.replace(job.request, derived_shapes=[], probes=[],
                              verify_shapes=[{"M": 1, "N": 1}, {"M": 17, "N": 33}, {"M": 2, "N": 5}])
    res = evaluate(req)
    assert (res.verdict, res.reason) == ("accepted", ""), res.reason
    refs = oracle(req)["references"]
    assert {f"fresh:{si}:0" for si in range(3)} <= set(refs)
    assert audit_problem(res.audit, refs, "allclose", req.tol, req.precision) is None
