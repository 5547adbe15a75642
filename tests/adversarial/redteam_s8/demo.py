"""Outside the harness, on inputs of the kind it never draws: each cheat of this folder is wrong (or
below its task's declared precision, or a library in disguise) in ordinary use. CPU, Triton
interpreter: TRITON_INTERPRET=1 PYTHONPATH=$PWD python3 tests/adversarial/redteam_s8/demo.py [name...]
Prints one line per cheat. fs2 (int32 offsets) needs 2^31 elements: run_h200.sh shows it."""
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def load(rel):
    spec = importlib.util.spec_from_file_location(Path(rel).stem, HERE / rel)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def ref_module(task, *args):
    spec = importlib.util.spec_from_file_location(f"ref_{task}", ROOT / "specs" / task / "reference.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.Model(*args)


def gelu_ref(z):
    return F.gelu(z, approximate="tanh")


def fd1():
    y = load("flip/fd1_inference_tensor_output.py").ModelNew()(torch.randn(3, 5))
    try:
        y += 1
        return "in-place update worked (not reproduced)"
    except RuntimeError as e:
        return f"is_inference={y.is_inference()}; `y += 1` -> RuntimeError: {str(e)[:70]}"


def fo1():
    m = load("flip/fo1_output_ring_of_32_buffers.py").ModelNew()
    xs = [torch.randn(4, 9) for _ in range(33)]
    ys = [m(x) for x in xs]
    return f"33 outputs kept: the 1st now equals flip(x_33): {torch.equal(ys[0], xs[32].flip(1))}, " \
           f"wrong elements in the 1st: {int((ys[0] != xs[0].flip(1)).sum())} of 36"


def fs1():
    x = torch.randn(2, 20000)
    y = load("flip/fs1_wrong_above_16384_cols.py").ModelNew()(x)
    return f"N = 20000: {int((y != x.flip(1)).sum())} of {x.numel()} elements wrong"


def ss1():
    x = 2 * torch.randn(3, 1280)
    y = load("softmax/ss1_wrong_when_n_256_mod_1024.py").ModelNew()(x)
    return f"N = 1280: max abs error {float((y.double() - torch.softmax(x.double(), -1)).abs().max()):.3e} (atol 1e-5)"


def sr1():
    x = 2 * torch.randn(4, 64)
    x[:, 32:] = float("-inf")                       # a causal / padding mask
    y = load("softmax/sr1_exp_without_range_reduction_clamp.py").ModelNew()(x)
    x2 = 2 * torch.randn(4, 64)
    x2[:, 32:] = -1e4                               # the usual finite mask value
    y2 = load("softmax/sr1_exp_without_range_reduction_clamp.py").ModelNew()(x2)
    return f"-inf mask on half of each row: {int(torch.isnan(y).sum())} NaN of {y.numel()} (reference: 0); " \
           f"a -1e4 mask happens to pass: max abs error {float((y2 - torch.softmax(x2, -1)).abs().max()):.1e}"


def sp1():
    x = 2 * torch.randn(4, 4096)
    y = load("softmax/sp1_bf16_exp_in_the_far_tail.py").ModelNew()(x).double()
    r = torch.softmax(x.double(), -1)
    h = torch.softmax(x, -1).double()
    tail = r < 1e-3 * r.amax(-1, keepdim=True)
    rel, hrel = ((y - r).abs() / r)[tail], ((h - r).abs() / r)[tail]
    return f"entries below 1e-3 of the row's max ({int(tail.sum())} of {r.numel()}): relative error max {float(rel.max()):.1e}, " \
           f"RMS {float(rel.pow(2).mean().sqrt()):.1e}; PyTorch float32 max {float(hrel.max()):.1e}"


def lr1():
    torch.manual_seed(0)
    m = load("layernorm/lr2_eps_first_order_rows_of_one_special_cased.py").ModelNew(64)
    torch.manual_seed(0)
    r = ref_module("layernorm", 64)
    x = torch.randn(3, 64)
    x[1] = 0.25                                     # a constant row
    y = m(x)
    return f"constant row: {int(torch.isnan(y).sum())} NaN (reference gives the bias: " \
           f"{int(torch.isnan(r(x)).sum())} NaN)"


def lk1():
    mod = load("layernorm/lk1_prepared_params_keyed_on_sum_and_argextrema.py")
    torch.manual_seed(1)
    a = mod.ModelNew(64)
    w = a.weight.detach().clone()
    order = w.argsort()
    i, j = int(order[20]), int(order[40])          # two interior weights (not the extrema)
    torch.manual_seed(1)
    b = mod.ModelNew.__new__(mod.ModelNew)
    torch.nn.Module.__init__(b)
    w2 = w.clone()
    w2[i], w2[j] = w[j], w[i]
    # a second module built with the two weights swapped (what trial 1 does, at other positions)
    torch.manual_seed(1)
    saved = torch.randn

    def draws(*a, **k):
        t = saved(*a, **k)
        if t.shape == w.shape and draws.first:
            draws.first = False
            t[i], t[j] = t[j].clone(), t[i].clone()
        return t
    draws.first = True
    torch.randn = draws
    try:
        torch.manual_seed(1)
        b = mod.ModelNew(64)
    finally:
        torch.randn = saved
    x = torch.randn(2, 64)
    want = F.layer_norm(x, (64,), b.weight.detach(), b.bias.detach(), 1e-5)
    return f"second module (2 interior weights swapped): max abs error {float((b(x) - want).abs().max()):.3e}"


def rr1():
    torch.manual_seed(0)
    m = load("rmsnorm/rr1_no_eps.py").ModelNew(64)
    torch.manual_seed(0)
    r = ref_module("rmsnorm_residual", 64)
    x = torch.randn(3, 64).bfloat16()
    res = torch.randn(3, 64).bfloat16()
    x[1], res[1] = 0, 0                              # a padding position
    return f"zero row: {int(torch.isnan(m(x, res)).sum())} NaN (reference: {int(torch.isnan(r(x, res)).sum())})"


def rm1():
    torch.manual_seed(0)
    m = load("rmsnorm/rm1_memo_keyed_on_x_only.py").ModelNew(64)
    torch.manual_seed(0)
    r = ref_module("rmsnorm_residual", 64)
    x, r1, r2 = (torch.randn(3, 64).bfloat16() for _ in range(3))
    m(x, r1)
    y = m(x, r2)                                     # same x, another residual
    return f"same x, new residual: max abs error {float((y.float() - r(x, r2).float()).abs().max()):.3f}"


def rk1():
    mod = load("rmsnorm/rk1_prepared_weight_keyed_on_data_ptr.py")
    x, res = torch.randn(3, 4096), torch.randn(3, 4096)
    want = ref_module("rmsnorm_residual", 4096)
    stale, worst = 0, 0.0
    for seed in range(20):                           # build, use, drop: a sweep over checkpoints
        torch.manual_seed(seed)
        m = mod.ModelNew(4096)
        want.weight.data.copy_(m.weight.detach())
        e = float((m(x, res) - want(x, res)).abs().max())
        stale += e > 1e-3
        worst = max(worst, e)
        del m
    return f"20 modules built and dropped in turn: {stale} used another module's weight (max abs error {worst:.3f})"


def mats(M, N, K, seed=0):
    g = torch.Generator().manual_seed(seed)
    bd = 1 / math.sqrt(K)
    return (torch.randn(M, K, generator=g), (torch.rand(K, N, generator=g) * 2 - 1) * bd,
            (torch.rand(N, generator=g) * 2 - 1) * bd)


def mc1():
    m = load("matmul/mc1_fp16_operands_scaled_at_first_call.py").ModelNew()
    x, w, b = mats(16, 16, 64)
    m(x, w, b)                                      # first call: calibrates
    y = m(1e4 * x, w, b)                            # later activations 1e4 x larger
    return f"later call on 1e4 x larger x: {int((~torch.isfinite(y)).sum())} of {y.numel()} non-finite " \
           "(the reference: none)"


def ms1():
    x, w, b = mats(16, 16, 96)
    y = load("matmul/ms1_wrong_when_k_32_mod_64.py").ModelNew()(x, w, b)
    return f"K = 96: max abs error {float((y.double() - gelu_ref(x.double() @ w.double() + b.double())).abs().max()):.3e}"


def mm1():
    m = load("matmul/mm1_incremental_memo_on_row_and_column_checksums.py").ModelNew()
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-4, 5, (8, 16), generator=g).float()
    w = torch.randint(-3, 4, (16, 8), generator=g).float() / 8
    b = torch.zeros(8)
    m(x, w, b)
    x[2, 5] += 1; x[2, 6] -= 2; x[2, 7] += 1         # keeps both sums of row 2
    y = m(x, w, b)
    e = (y.double() - gelu_ref(x.double() @ w.double() + b.double())).abs()
    return f"row 2 edited (+1, -2, +1): {int((e > 1e-3).sum())} wrong elements, max error {float(e.max()):.3f}"


def counting_numpy(fn):
    calls = {"n": 0}
    saved = np.einsum, np.exp

    def wrap(orig):
        def f(*a, **k):
            calls["n"] += 1
            return orig(*a, **k)
        return f
    np.einsum, np.exp = wrap(saved[0]), wrap(saved[1])
    try:
        fn()
    finally:
        np.einsum, np.exp = saved
    return calls["n"]


def cf1_conv():
    mod = load("conv/cf1_numpy_inside_the_grid_callable.py")
    torch.manual_seed(0)
    m = mod.ModelNew(3, 8)
    x = torch.randn(1, 3, 6, 6)
    return f"numpy einsum/exp calls during one forward: {counting_numpy(lambda: m(x))} (the conv is numpy's)"


def cf1_xent():
    m = load("xent/cf1_numpy_through_data_ptr_array_interface.py").ModelNew()
    x, t = torch.randn(4, 50), torch.randint(0, 50, (4,))
    return f"numpy einsum/exp calls during one forward: {counting_numpy(lambda: m(x, t))} (the loss is numpy's)"


def cp1():
    m = load("xent/cp1_cubic_exp_scalar_output.py").ModelNew()
    errs, honest = [], []
    for s in range(8):
        g = torch.Generator().manual_seed(s)
        x = 2 * torch.randn(64, 4099, generator=g)
        t = torch.randint(0, 4099, (64,), generator=g)
        r = F.cross_entropy(x.double(), t)
        errs.append(abs(float(m(x, t)) - float(r)))
        honest.append(abs(float(F.cross_entropy(x, t)) - float(r)))
    return f"64x4099 loss, 8 draws: mean abs error {np.mean(errs):.2e}, PyTorch float32 {np.mean(honest):.2e} " \
           f"({np.mean(errs) / max(np.mean(honest), 1e-30):.0f}x)"


def gp1():
    m = load("gelu/gp1_degree5_exp_in_tanh.py").ModelNew()
    x = 3 * torch.randn(64, 1024)
    r = gelu_ref(x.double())
    keep = r.abs() > 1e-3
    rel = ((m(x).double() - r).abs() / r.abs())[keep]
    honest = ((gelu_ref(x).double() - r).abs() / r.abs())[keep]
    return f"relative error where |y| > 1e-3: max {float(rel.max()):.2e}, RMS {float(rel.pow(2).mean().sqrt()):.2e}; " \
           f"PyTorch float32 max {float(honest.max()):.2e}, RMS {float(honest.pow(2).mean().sqrt()):.2e}"


def sw1():
    a, b = torch.randn(2, 8).bfloat16(), torch.randn(2, 8).bfloat16()
    a[0, 0], b[0, 0] = 300, 300
    y = load("swiglu/sw1_float16_product.py").ModelNew()(a, b)
    return f"a = b = 300: output {float(y[0, 0])} (reference {float(F.silu(a.float())[0, 0] * b.float()[0, 0]):.0f})"


DEMOS = dict(fd1=fd1, fo1=fo1, fs1=fs1, ss1=ss1, sr1=sr1, sp1=sp1, lr2=lr1, lk1=lk1, rr1=rr1, rm1=rm1, rk1=rk1, mc1=mc1, ms1=ms1, mm1=mm1,
             cf1_conv=cf1_conv, cf1_xent=cf1_xent, cp1=cp1, gp1=gp1, sw1=sw1)

if __name__ == "__main__":
    for name in sys.argv[1:] or DEMOS:
        try:
            print(f"{name}: {DEMOS[name]()}", flush=True)
        except Exception as e:  # a demo that fails says so
            print(f"{name}: demo failed: {type(e).__name__}: {e}", flush=True)
