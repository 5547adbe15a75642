"""The red team's honest direct-FMA conv kernel (tests/adversarial/redteam_2026_12_01/conv/h1_direct_fma.py),
loaded by path, for the precision cheats of this folder: each cheat changes what happens around
one honest kernel (which operands it gets, which outputs it stores in a lower format)."""

import importlib.util
import pathlib

_PATH = pathlib.Path(__file__).resolve().parents[2] / "redteam_2026_12_01" / "conv" / "h1_direct_fma.py"
_spec = importlib.util.spec_from_file_location("_redteam_h1_direct_fma", _PATH)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
conv_relu_pool = _mod.conv_relu_pool
