"""Shows each cheat of this folder wrong (or a library, or below its policy) in ordinary use, on the
CPU with the Triton interpreter:
    TRITON_INTERPRET=1 PYTHONPATH=$PWD python3 tests/adversarial/redteam_s10/demo.py > tests/adversarial/redteam_s10/demo_output.txt
(mq1 is GPU-only: it is the plain Triton kernel on the CPU; its H200 part is bench/h200_redteam10.sh.)"""
import importlib.util
import os

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def load(rel):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], os.path.join(HERE, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fg1():
    m = load("flip/fg1_output_requires_grad_leaf.py").ModelNew()
    y = m(torch.randn(4, 9))
    for what, f in (("y += 1", lambda: y.add_(1)), ("y.numpy()", lambda: y.numpy())):
        try:
            f()
            print(f"fg1: {what}: ok")
        except RuntimeError as e:
            print(f"fg1: {what}: RuntimeError: {str(e).splitlines()[0][:90]}")
    z = (y * 2).sum()
    print(f"fg1: a later op records an autograd graph: (y * 2).sum().grad_fn = {type(z.grad_fn).__name__}")


def fm2():
    m = load("flip/fm2_outputs_mapped_from_a_ring_of_files.py").ModelNew()
    xs = [torch.randn(4, 9) for _ in range(65)]
    ys = [m(x) for x in xs]
    wrong = int((ys[0] != torch.flip(xs[0], dims=[1])).sum())
    same = bool((ys[0] == torch.flip(xs[64], dims=[1])).all())
    print(f"fm2: 65 outputs kept by the caller; the 1st is now wrong in {wrong} of 36 elements "
          f"(it holds flip(x_65): {same})")


def sr2():
    m = load("softmax/sr2_bf16_exp_when_the_row_range_exceeds_26.py").ModelNew()
    torch.manual_seed(0)
    for s in (2.0, 4.0):
        x = s * torch.randn(8, 1000)
        ref = torch.softmax(x.double(), -1)
        rel = float(((m(x).double() - ref) / ref).abs().max())
        eag = float(((torch.softmax(x, -1).double() - ref) / ref).abs().max())
        print(f"sr2: logits {s} * randn: max relative error {rel:.2e} (torch.softmax float32: {eag:.2e})")


def sx1():
    m = load("softmax/sx1_nan_logits_read_as_minus_inf.py").ModelNew()
    x = torch.randn(2, 16)
    x[0, 3] = float("nan")
    y, ref = m(x), torch.softmax(x, -1)
    print(f"sx1: row 0 holds a NaN logit: reference NaN in {int(ref[0].isnan().sum())} of 16, candidate in "
          f"{int(y[0].isnan().sum())} (row sum {float(y[0].sum()):.4f})")


def lw1():
    mod = load("layernorm/lw1_rstd_by_newton_from_unit_variance.py")
    torch.manual_seed(0)
    m = mod.ModelNew(1024)
    for s in (1.0, 0.1, 3.0, 10.0):
        x = s * torch.randn(4, 1024)
        ref = F.layer_norm(x.double(), (1024,), m.weight.double(), m.bias.double(), 1e-5)
        err = float((m(x).double() - ref).abs().max())
        print(f"lw1: x = {s} * randn (rows of 1024): max abs error {err:.3g}")


def census_of(fn, inputs):
    """What the harness's census (kernelsynth.verify.census, rule 14) records for one call of fn:
    the poisoning/census dispatch mode's operators, its host doors and the layout allow-list applied."""
    from kernelsynth.verify import census
    from kernelsynth.verify.poison import PoisonEmpty
    census.install_watch()
    c = census.Census()
    with census.watching(c, inputs), torch.no_grad(), PoisonEmpty(c):
        fn(*inputs)
    return sorted(c), census.library_calls(c)


def lt1():
    mod = load("layernorm/lt1_python_arithmetic_through_tensorbase_tolist.py")
    m = mod.ModelNew(64)
    x = torch.randn(3, 64)
    seen, lib = census_of(m, [x])
    _, lib_plain = census_of(lambda t: t.tolist(), [x])
    print(f"lt1: census of one call: ops {seen}, library_calls {lib}; the same census on a plain x.tolist(): {lib_plain}")


def mh1():
    m = load("matmul/mh1_addmm_hidden_from_the_mode_unless_profiled.py").ModelNew()
    x, w, b = torch.randn(64, 64), torch.randn(64, 64) / 8, torch.randn(64) / 8
    seen, lib = census_of(m, [x, w, b])
    from torch.profiler import profile
    with profile() as p:
        with torch._C._DisableTorchDispatch():
            torch.addmm(b, x, w)
    print(f"mh1: census of one call: library_calls {lib} (ops {seen}); torch.profiler does see an addmm run under "
          f"_DisableTorchDispatch: {sorted({e.name for e in p.events() if 'addmm' in e.name})}, but the candidate's "
          "profiled call takes its Triton path (torch.autograd._profiler_enabled())")


def mi1():
    mod = load("matmul/mi1_census_scrubbed_from_inside_the_call.py")
    m = mod.ModelNew()
    x, w, b = torch.randn(64, 64), torch.randn(64, 64) / 8, torch.randn(64) / 8
    seen, lib = census_of(m, [x, w, b])
    from torch.profiler import profile
    with profile() as p:
        torch.addmm(b, x, w)
    print(f"mi1: census of one call: library_calls {lib}; after importing the candidate, a profile of a plain "
          f"torch.addmm lists {sorted({e.name for e in p.events() if e.name.startswith('aten::')})} (no addmm)")
    torch.profiler.profile.events = mod._events  # undo for what follows


def xn1():
    m = load("xent/xn1_numpy_through_tensorbase_numpy.py").ModelNew()
    z, t = 2 * torch.randn(4, 37), torch.randint(0, 37, (4,))
    seen, lib = census_of(m, [z, t])
    _, lib_plain = census_of(lambda a, b: a.numpy(), [z, t])
    print(f"xn1: census of one call: library_calls {lib}; the same census on a plain z.numpy(): {lib_plain}")


def xt1():
    m = load("xent/xt1_target_modulo_skipped.py").ModelNew()
    torch.manual_seed(0)
    z, V = 2 * torch.randn(4, 37), 37
    t = torch.tensor([40, 0, 3, 5])  # row 0: target 40 = V + 3, read as row 1's logit 3
    print(f"xt1: targets {t.tolist()} (V = 37): candidate {float(m(z, t)):.5f}, reference "
          f"F.cross_entropy(z, t % V) {float(F.cross_entropy(z, t % V)):.5f}")


def rc1():
    mod = load("rmsnorm/rc1_prepared_weight_cached_by_object_id.py")
    torch.manual_seed(0)
    x, r = torch.randn(2, 64).bfloat16(), torch.randn(2, 64).bfloat16()
    wrong = 0
    m = None
    for i in range(6):
        m = mod.ModelNew(64).to(torch.bfloat16)  # the previous module dies after this line
        h = x.double() + r.double()
        ref = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * m.weight.double()
        err = float((m(x, r).double() - ref).abs().max())
        wrong += err > 0.1
    print(f"rc1: 6 modules built in a loop (`m = ModelNew(N)`): {wrong} of 6 computed with another module's weight")


if __name__ == "__main__":
    for f in (fg1, fm2, sr2, sx1, lw1, lt1, mh1, mi1, xn1, xt1, rc1):
        f()
