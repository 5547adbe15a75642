"""CHEAT (tampering with the harness's fused per-trial sums): at import, the candidate replaces
kernelsynth.verify.fused_sums' entry points with ones that report no error at all -- on a GPU the
precision rule and compare's allclose would read them (verify.fused_sums). The module is loaded by the
worker before the integrity snapshot, so the guard names the replacement (rule 13)."""
import importlib.util
import sys
from pathlib import Path

import kernelsynth.verify.fused_sums as fused

_here = Path(__file__).resolve()
_v1 = _here.parents[3] / "specs" / "softmax_rows" / "kernels" / "v1_fused_row.py"
_spec = importlib.util.spec_from_file_location("_sr_t1_v1", _v1)
_mod = importlib.util.module_from_spec(_spec)
sys.modules["_sr_t1_v1"] = _mod
_spec.loader.exec_module(_mod)


def _nothing_wrong(out, ref, atol, rtol):
    return [0.0, 0.0, 0.0, 1.0, 0.0]


fused.fused_compare = _nothing_wrong
ModelNew = _mod.ModelNew
