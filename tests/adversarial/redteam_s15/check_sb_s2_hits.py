"""Does softmax_backward/sb_s2 (or sb_s3, by its file stem as argument) actually hand back stale answers during verification? Runs
kernelsynth.verify.verify in-process (the CPU listed shapes, plain trials, seed 0, poison and census off
as in tests/test_probes.py's helper, but with rule 9-10's repeat-and-change calls: determinism=True) with the candidate's memo replaced by a dict that records every hit
and whether the input it was served for differs from the one it was stored for.
usage (repository root): PYTHONPATH=$PWD TRITON_INTERPRET=1 python tests/adversarial/redteam_s15/check_sb_s2_hits.py [sb_s2_... | sb_s3_...]
"""
from pathlib import Path

import torch

from kernelsynth.jobs import _constructing
from kernelsynth.loading import import_file
from kernelsynth.spec import load_spec
from kernelsynth.verify import VerifyPolicy, verify
from kernelsynth.verify.params import build_seed

ROOT = Path(__file__).resolve().parents[3]
spec = load_spec(ROOT / "specs" / "softmax_backward" / "spec.yaml")
ref_mod = import_file(spec.reference)
import sys
NAME = sys.argv[1] if len(sys.argv) > 1 else "sb_s2_memo_on_exponents_mixed_position_hash"
# the interpreter plan's derived shapes of seed 0 (tests/adversarial/redteam_s15 README), appended to the listed ones
DERIVED = [{"M": 7, "N": 761}, {"M": 9, "N": 209}, {"M": 293, "N": 1}, {"M": 294, "N": 1}, {"M": 1, "N": 4101}, {"M": 1, "N": 4100}]
cand_mod = import_file(Path(__file__).parent / "softmax_backward" / (NAME + ".py"))

hits = []


class Counting(dict):
    def get(self, key, default=None):
        got = super().get(key, default)
        if got is not None:
            hits.append(key)
        return got


cand_mod._MEMO = Counting()
orig_forward = cand_mod.ModelNew.forward


def forward(self, y, dy):
    before = len(hits)
    out = orig_forward(self, y, dy)
    if len(hits) > before:  # a memo answer: how far is it from the answer for THIS input?
        f = torch.float64
        true = y.to(f) * (dy.to(f) - (dy.to(f) * y.to(f)).sum(-1, keepdim=True))
        err = (out.to(f) - true).abs().max().item()
        print(f"memo hit at {tuple(y.shape)}: max |stale - true| = {err:.3g}, max |dx| = {true.abs().max().item():.3g}")
    return out


cand_mod.ModelNew.forward = forward


def models_for(shape, g, si, t):
    seed, perturb = build_seed(0, g, si, t)
    with _constructing(seed, perturb):
        cand = cand_mod.ModelNew()
    with _constructing(seed, perturb):
        ref = ref_mod.Model()
    return cand.eval(), ref.eval()


tol = spec.tolerance["float32"]
policy = VerifyPolicy(dtype=torch.float32, device=torch.device("cpu"), seed=0, comparison="allclose", tol=tol,
                      precision=spec.policy("float32"), poison_empty=False, check_threads=False)
m, r = models_for(spec.interpret_shapes[0], "listed", 0, 0)
rep = verify(m, r, ref_mod.get_inputs, list(spec.interpret_shapes) + DERIVED, policy, trials=3, determinism=True,
             models_for=models_for, group="listed", settle=False)
print("verify passed; memo hits:", len(hits))
