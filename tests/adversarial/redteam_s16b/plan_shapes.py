"""The CPU plan (seed 0) and H200 plans (seeds 0-2) of conv_relu_maxpool (the recipe of
tests/adversarial/redteam_s16/plan_c5.py, copied), and which shapes meet p1's and p2's conditions.
Run: PYTHONPATH=$PWD python tests/adversarial/redteam_s16b/plan_shapes.py"""
import math
import sys
from kernelsynth.shapes import (EXTREME_PLAN, JOINT_PLAN, LARGE_DIM_PLAN, RESIDUE_PLAN, derived_shapes, extreme_shapes,
                                joint_shapes, large_dim_shapes, residue_shapes)
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import joint_fits

CONDITIONS = {
    "p1 (C_in,H,W > 40, W % 16 != 0)": lambda s: s["C_in"] > 40 and s["H"] > 40 and s["W"] > 40 and s["W"] % 16 != 0,
    "p2 (C_out > 128, W in {3, 5})": lambda s: s["C_out"] > 128 and s["W"] in (3, 5),
}
spec = load_spec("specs/conv_relu_maxpool/spec.yaml")
verbose = "-v" in sys.argv
for interp in (True, False):
    for seed in ((0,) if interp else (0, 1, 2)):
        listed = spec.interpret_shapes if interp else spec.verify_shapes
        derived = derived_shapes(listed, seed, fresh=1 if interp else 2, constraints=spec.constraints)
        target = "interpret" if interp else "gpu"
        high, budget = LARGE_DIM_PLAN[target]
        derived += joint_shapes(listed + derived, seed, joint_fits(spec, listed, JOINT_PLAN[target]), high,
                                pairs=not interp, constraints=spec.constraints, within_listed=interp)
        derived += large_dim_shapes(listed + derived, seed, high, budget, constraints=spec.constraints, pack=not interp)
        fits = ((lambda s: math.prod(s.values()) <= budget) if interp else joint_fits(spec, listed, JOINT_PLAN[target]))
        derived = residue_shapes(listed, derived, seed, high, fits, constraints=spec.constraints,
                                 above_listed=interp, pack=not interp, cover=RESIDUE_PLAN[target])
        if not interp:
            seen = listed + derived + [spec.timing_shape]
            derived += extreme_shapes(seen, seed, joint_fits(spec, listed, EXTREME_PLAN[target]), constraints=spec.constraints)
        shapes = listed + derived + ([] if interp else [spec.timing_shape])
        print(f"{target} seed {seed}: {len(shapes)} shapes")
        if verbose:
            for s in shapes:
                print("   ", "x".join(str(v) for v in s.values()))
        for name, cond in CONDITIONS.items():
            hit = [s for s in shapes if cond(s)]
            print(f"   {name}: {['x'.join(str(v) for v in s.values()) for s in hit] or 'none'}")
