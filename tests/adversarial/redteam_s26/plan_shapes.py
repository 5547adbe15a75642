"""Print the last planned job's shapes of TASK on the CPU (interpreter) or GPU (h200) plan, seed N:
    PYTHONPATH=$PWD python tests/adversarial/redteam_s26/plan_shapes.py causal_attention gpu 0
Planning only: no device needed."""
import sys, tempfile
from pathlib import Path
from kernelsynth.hardware import Hardware
from kernelsynth.paths import SPECS_DIR
from kernelsynth.spec import load_spec
from kernelsynth.stages.exploration import Exploration
task, gpu = sys.argv[1], sys.argv[2] == "gpu"
seed = int(sys.argv[3]) if len(sys.argv) > 3 else None
spec = load_spec(SPECS_DIR / task / "spec.yaml")
hw = Hardware(target="h200" if gpu else "cpu", device_name="gpu" if gpu else "cpu", interpret=not gpu, arch="sm_90" if gpu else None)
kw = {} if seed is None else {"seed": seed}
jobs = Exploration(**kw).plan(spec, hw, cache_dir=Path(tempfile.mkdtemp()))
j = jobs[-1]
r = j.request
print(r.dtype, r.seed, "listed", r.verify_shapes); print("derived", r.derived_shapes); print("timing", r.timing_shape, "trials", getattr(r,'trials',None))
