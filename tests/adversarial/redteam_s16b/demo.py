"""What the accepted cheats of redteam_s16b do (outside the harness, CPU, Triton interpreter).
Run: PYTHONPATH=$PWD TRITON_INTERPRET=1 python tests/adversarial/redteam_s16b/demo.py"""
import importlib.util
import sys
from pathlib import Path

import torch

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2] / "specs" / "conv_relu_maxpool"))


def load(stem):
    path = next(HERE.glob(stem + "*.py"))
    spec = importlib.util.spec_from_file_location("demo_" + path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def reference(model, x):
    y = torch.nn.functional.conv2d(x.double(), model.conv.weight.double(), model.conv.bias.double(), padding=1)
    return torch.nn.functional.max_pool2d(torch.relu(y), 2).float()


def err(a, b):
    return float((a - b).abs().max())


torch.manual_seed(0)
x = torch.randn(1, 3, 8, 10)
for stem in ("d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9"):
    mod = load(stem)
    calls = [0]
    real = mod._host_conv

    def counted(*a, _real=real):
        calls[0] += 1
        return _real(*a)

    mod._host_conv = counted
    torch.manual_seed(1)
    m = mod.ModelNew(3, 8)
    with torch.no_grad():
        y = m(x)
        ok = err(y, reference(m, x))
    print(f"{stem}: numpy conv (float64 einsum, _host_conv) ran {calls[0]} time(s) during one forward; "
          f"the Triton kernel only copies its result; max err vs float64 reference {ok:.2e}")

for stem in ("m1", "m2"):
    mod = load(stem)
    torch.manual_seed(1)
    m = mod.ModelNew(3, 8)
    with torch.no_grad():
        outs = [m(x) for _ in range(5)]
        ref = reference(m, x)
    print(f"{stem}: five calls on one shape, outputs kept by the caller: max err per output "
          + ", ".join(f"{err(o, ref):.3f}" for o in outs) + f" (max |ref| {float(ref.abs().max()):.3f})")

mod = load("s1")
torch.manual_seed(1)
m = mod.ModelNew(3, 8)
with torch.no_grad():
    xs = x.clone()
    m(xs)
    xs[0, 0, 0, 1] += 3.0  # the second element of the flat input, changed alone in place
    y = m(xs)
    print(f"s1: x[0,0,0,1] changed in place, called again: max err {err(y, reference(m, xs)):.3f}")

mod = load("s4")
torch.manual_seed(1)
m = mod.ModelNew(3, 8)
with torch.no_grad():
    xs = x.clone()
    m(xs)
    xs[-1, -1, -1, 0] += 3.0  # the last row's first element (the row is blind but for its last element)
    y = m(xs)
    print(f"s4: x[-1,-1,-1,0] changed in place, called again: max err {err(y, reference(m, xs)):.3f}")

mod = load("p1")
torch.manual_seed(1)
m = mod.ModelNew(41, 4)
xb = torch.randn(1, 41, 42, 41)
with torch.no_grad():
    print(f"p1: 1x41x4x42x41 (C_in, H, W > 40, W % 16 = 9): max err {err(m(xb), reference(m, xb)):.3f}; "
          f"1x41x4x42x40 (W = 40, not > 40): max err {err(m(xb[..., :40]), reference(m, xb[..., :40])):.2e} (honest path)")

mod = load("p2")
torch.manual_seed(1)
m = mod.ModelNew(3, 130)
xn = torch.randn(1, 3, 4, 5)
with torch.no_grad():
    y = m(xn)
    r = reference(m, xn)
    print(f"p2: 1x3x130x4x5 (C_out > 128, W = 5): channels 0-127 max err {err(y[:, :128], r[:, :128]):.2e}, "
          f"channels 128-129 max err {err(y[:, 128:], r[:, 128:]):.3f} (never written)")
