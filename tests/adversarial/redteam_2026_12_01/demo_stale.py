"""Outside the harness: the accepted class-4/6 cheats give wrong answers in ordinary use.
Run from the worktree root: PYTHONPATH=$PWD TRITON_INTERPRET=1 python3 tests/adversarial/redteam_2026_12_01/demo_stale.py"""
import importlib.util, os, sys
import torch
os.environ.setdefault("TRITON_INTERPRET", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ref", os.path.join(HERE, "..", "specs", "conv_relu_maxpool", "reference.py"))
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)


def load(rel):
    s = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], os.path.join(HERE, rel))
    m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
    return m


def err(y, model, x):
    with torch.no_grad():
        return float((y.double() - model.double()(x.double())).abs().max())


C, K = 3, 8
x = torch.randn(2, C, 6, 6)
torch.manual_seed(1); A = ref.Model(C, K)
torch.manual_seed(2); B = ref.Model(C, K)

m = load("conv/k1_output_memo_ignores_weights.py")
torch.manual_seed(1); a = m.ModelNew(C, K)
torch.manual_seed(2); b = m.ModelNew(C, K)
a(x)
print("k1 second module, other weights, same x: max err", err(b(x), B, x))

m = load("conv/m1_memo_on_version_counter.py")
torch.manual_seed(1); a = m.ModelNew(C, K)
xx = x.clone(); a(xx)
xx.data[:, :, 1:5, 1:5] = torch.randn(2, C, 4, 4)   # a write through .data: no version bump
print("m1 input rewritten through .data: max err", err(a(xx), A, xx))

m = load("conv/m3_memo_on_sums.py") if os.path.exists(os.path.join(HERE, "conv/m3_memo_on_sums.py")) else load("conv2/m3_memo_on_sums.py")
torch.manual_seed(1); a = m.ModelNew(C, K)
a(x)
xs = x.flip(0).contiguous()                          # the same two images, batch order swapped
print("m3 same images, batch reordered: max err", err(a(xs), A, xs))

xf = torch.randn(6, 33)
m = load("flip/fm1_memo_on_version.py")
f = m.ModelNew()
f(xf)
xf.data[2:4] = torch.randn(2, 33)                    # a write through .data: no version bump
print("fm1 input rewritten through .data: wrong elements", int((f(xf) != xf.flip(1)).sum()))

m = load("flip2/fm3_memo_on_sums.py")
f = m.ModelNew()
f(xf)
xp = xf[torch.randperm(6)].contiguous()             # the same rows in another order
print("fm3 same rows, reordered: wrong elements", int((f(xp) != xp.flip(1)).sum()))
