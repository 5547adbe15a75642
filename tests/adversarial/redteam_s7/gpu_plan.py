"""The GPU verify shapes of the engine's plan (kernelsynth.stages.exploration.Exploration.plan's recipe,
seed 0) for the tasks of this folder, and which of them meet the shape cheats' conditions (s1: C_out % 4
== 2; fs1: N % 8 == 4 and N > 300; ss1: N % 4 == 2 and N > 130), with rule 12's residues (session 8). Run: PYTHONPATH=$PWD python3 tests/adversarial/redteam_s7/gpu_plan.py"""
from kernelsynth.shapes import JOINT_PLAN, LARGE_DIM_PLAN, derived_shapes, joint_shapes, large_dim_shapes, residue_shapes
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import joint_fits

CONDS = {"conv_relu_maxpool": lambda s: s["C_out"] % 4 == 2, "flip2d": lambda s: s["N"] % 8 == 4 and s["N"] > 300,
         "softmax_rows": lambda s: s["N"] % 4 == 2 and s["N"] > 130}
for task, cond in CONDS.items():
    spec = load_spec(f"specs/{task}/spec.yaml")
    listed = spec.verify_shapes
    derived = derived_shapes(listed, 0, fresh=2, constraints=spec.constraints)
    high, budget = LARGE_DIM_PLAN["gpu"]
    derived += joint_shapes(listed + derived, 0, joint_fits(spec, listed, JOINT_PLAN["gpu"]), high, pairs=True,
                            constraints=spec.constraints, within_listed=False)
    derived += large_dim_shapes(listed + derived, 0, high, budget, constraints=spec.constraints, pack=True)
    derived = residue_shapes(listed, derived, 0, high, joint_fits(spec, listed, JOINT_PLAN["gpu"]),
                             constraints=spec.constraints)  # session 8: the residues 2 mod 4 and 4 mod 8
    shapes = listed + derived + ([spec.timing_shape] if spec.timing_shape else [])
    hits = [s for s in shapes if cond(s)]
    print(task, len(shapes), "shapes;", "meeting the cheat's condition:", hits or "none")
    print("   ", ["x".join(str(v) for v in s.values()) for s in shapes])
