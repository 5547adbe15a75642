"""New JIT specialisation-key tuples of each task's H200 plan (references/VERIFICATION.md, "Cost per candidate"):
per spec and seeds 0-2, ``new/derived``: how many tuples of shapes.spec_key over the dims the derived shapes
have that no listed or timing shape has (each one more compile of every kernel per config inside verify_s),
and how many derived shapes there are. Planning only (no torch, no GPU): ``python bench/spec_keys_plan.py``."""

import dataclasses, sys
from kernelsynth.hardware import Hardware
from kernelsynth.paths import SPECS_DIR
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration
from kernelsynth.shapes import spec_key
H200 = dataclasses.replace(Hardware(target="h200", device_name="gpu", interpret=False, arch="sm_90"), total_mem_bytes=139 * 2**30)
for d in sorted(SPECS_DIR.iterdir()):
    if not (d / "spec.yaml").exists(): continue
    spec = load_spec(d / "spec.yaml")
    out = []
    for seed in (0, 1, 2):
        jobs = [j for j in Exploration(seed=seed, baselines=False).plan(spec, H200) if not j.request.candidate.trusted]
        if not jobs: continue
        job = jobs[0]
        listed, derived = list(job.request.verify_shapes), list(job.request.derived_shapes)
        names = list(listed[0])
        k = lambda s: tuple(spec_key(s[n]) for n in names)
        known = {k(s) for s in listed + ([spec.timing_shape] if spec.timing_shape else [])}
        out.append(f"{len({k(s) for s in derived} - known)}/{len(derived)}")
    print(d.name, " ".join(out))
