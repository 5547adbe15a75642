"""The CPU (interpreter) plan of each attacked task, seed 0 (and 1): listed + derived shapes, the recipe of
kernelsynth.stages.exploration.Exploration.plan as redteam_s16/plan_c5.py copies it.
Run: PYTHONPATH=$PWD python tests/adversarial/redteam_s24/plan.py"""
import math
import sys
from kernelsynth.shapes import (JOINT_PLAN, LARGE_DIM_PLAN, RESIDUE_PLAN, derived_shapes, joint_shapes,
                                large_dim_shapes, residue_shapes)
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import joint_fits

for task in sys.argv[1:] or ["cumsum_rows", "column_sum", "rmsnorm_residual", "causal_attention", "gelu_tanh"]:
    spec = load_spec(f"specs/{task}/spec.yaml")
    for seed in (0, 1):
        listed = spec.interpret_shapes
        derived = derived_shapes(listed, seed, fresh=1, constraints=spec.constraints)
        high, budget = LARGE_DIM_PLAN["interpret"]
        derived += joint_shapes(listed + derived, seed, joint_fits(spec, listed, JOINT_PLAN["interpret"]), high,
                                pairs=False, constraints=spec.constraints, within_listed=True)
        derived += large_dim_shapes(listed + derived, seed, high, budget, constraints=spec.constraints, pack=False)
        fits = lambda s: math.prod(s.values()) <= budget
        derived = residue_shapes(listed, derived, seed, high, fits, constraints=spec.constraints,
                                 above_listed=True, pack=False, cover=RESIDUE_PLAN["interpret"])
        fmt = lambda s: "x".join(str(v) for v in s.values())
        print(task, "seed", seed, "listed", " ".join(map(fmt, listed)), "| derived", " ".join(map(fmt, derived)))
