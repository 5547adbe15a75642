"""Each accepted cheat of the s11 set going wrong in ordinary use (CPU, Triton interpreter), and what the
harness's own census sees of the library doors. From the repo root:
    TRITON_INTERPRET=1 PYTHONPATH=$PWD python3 tests/adversarial/redteam_s11/demo.py   # -> demo_output.txt"""
import importlib.util
import sys
import warnings

import torch
import torch._dynamo  # noqa: F401  (imported lazily by a first dispatch mode otherwise: numpy calls inside a census)

warnings.filterwarnings("ignore")
R = "tests/adversarial/redteam_s11/"
from kernelsynth.interpreter import patch_bfloat16_rounding  # noqa: E402
from kernelsynth.verify.census import Census, install_watch, library_calls, profiled_library_calls, profiled_of  # noqa: E402
from kernelsynth.verify.poison import call_poisoned, reset_returned  # noqa: E402

patch_bfloat16_rounding()
install_watch()


def load(p):
    s = importlib.util.spec_from_file_location("m" + str(abs(hash(p))), R + p)
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


def ref(task):
    s = importlib.util.spec_from_file_location("ref_" + task, f"specs/{task}/reference.py")
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


def census_of(model, inputs, ref_ops=()):
    """What the harness's census labels for one verified-style call (poisoning mode + watching views)."""
    with torch.no_grad():
        model(*[t.clone() for t in inputs])  # a first call, unwatched as in the worker (lazy imports, JIT)
    c = Census()
    call_poisoned(model, inputs, torch.device("cpu"), True, None, c)
    reset_returned()
    return sorted(set(library_calls(c, ref_ops)) | set(profiled_library_calls(profiled_of(c), ref_ops)))


def err(a, b):
    return (a.double() - b.double()).abs().max().item()


conv, mm, flip = ref("conv_relu_maxpool"), ref("matmul_bias_gelu"), ref("flip2d")
g = torch.Generator().manual_seed(0)

print("== library doors: the census of one call (poisoning mode, host-door mode, per-call profiler)")
x = torch.randn(2, 16, 15, 33, generator=g)
torch.manual_seed(1)
co1 = load("conv/co1_convolution_through_redispatch_below_the_python_key.py").ModelNew(16, 40)
print("co1 library_calls", census_of(co1, [x], ["cudnn_convolution", "_convolution", "conv2d", "max_pool2d"]),
      "| the same conv by torch.conv2d:", census_of(lambda t: torch.conv2d(t, co1.conv.weight, padding=1), [x]))
xm, wm, bm = mm.get_inputs(dict(M=37, N=65, K=33), torch.float32, "cpu", g)
mo1 = load("matmul/mo1_addmm_through_redispatch.py").ModelNew()
print("mo1 library_calls", census_of(mo1, [xm, wm, bm], ["mm", "addmm"]),
      "| torch.addmm:", census_of(lambda a, b_, c: torch.addmm(c, a, b_), [xm, wm, bm]))
xo1 = load("xent/xo1_log_softmax_through_redispatch.py").ModelNew()
lg, tg = 2 * torch.randn(64, 1000, generator=g), torch.randint(0, 1000, (64,), generator=g)
print("xo1 library_calls", census_of(xo1, [lg, tg]), "| F.cross_entropy:",
      census_of(lambda a, t: torch.nn.functional.cross_entropy(a, t), [lg, tg]),
      f"| loss error {abs(xo1(lg, tg).item() - torch.nn.functional.cross_entropy(lg.double(), tg).item()):.1e}")
xf = torch.randn(37, 1000, generator=g)
for f in ("flip/fo1_flip_through_redispatch.py", "flip/fo2_redispatched_flip_under_empty_grid_placeholders.py"):
    m = load(f).ModelNew()
    m(xf.clone())  # the unwatched first call
    c = Census(movement=True)
    out = call_poisoned(m, [xf], torch.device("cpu"), True, None, c)
    reset_returned()
    print(f.split("/")[1][:3], "library_calls", sorted(set(library_calls(c)) | set(profiled_library_calls(profiled_of(c)))),
          "calls_without_launch", c.calls_without_launch, "bit-exact", torch.equal(out.view(torch.int32), xf[:, torch.arange(999, -1, -1)].view(torch.int32)))

print("== mw1 / cw1: the call the harness verifies vs an ordinary (timed) call, on the probe's 2^17-scaled inputs")
mw1 = load("matmul/mw1_fp16_operands_when_unwatched.py").ModelNew()
s = 2.0 ** 17
r = mm.Model()(xm.double() * s, wm.double() * s, bm.double() * s)
watched = call_poisoned(mw1, [xm * s, wm * s, bm * s], torch.device("cpu"), True, None, None)
reset_returned()
plain = mw1(xm * s, wm * s, bm * s)
print(f"mw1 verified call: max rel err {err(watched, r) / r.abs().max().item():.2e}; ordinary call: "
      f"{int(torch.isinf(plain).sum())} inf, {int(torch.isnan(plain).sum())} NaN of {plain.numel()}, "
      f"{int((~torch.isclose(plain.double(), r, rtol=5e-3, atol=5e-3 * 2.0 ** 34)).sum())} outside the probe's tolerance")
torch.manual_seed(2)
cw1 = load("conv/cw1_fp16_operands_when_no_poisoning_mode_is_on.py").ModelNew(16, 40)
torch.manual_seed(2)
rc = conv.Model(16, 40).double()
with torch.no_grad():
    cw1.conv.weight.mul_(s)
    rc.conv.weight.mul_(s)
    r = rc(x.double() * s)
watched = call_poisoned(cw1, [x * s], torch.device("cpu"), True, None, None)
reset_returned()
with torch.no_grad():
    plain = cw1(x * s)
print(f"cw1 verified call: max rel err {err(watched, r) / r.abs().max().item():.2e}; ordinary call: "
      f"{int(torch.isinf(plain).sum())} inf, {int(torch.isnan(plain).sum())} NaN of {plain.numel()}, "
      f"{int((~torch.isclose(plain.double(), r, rtol=5e-3, atol=5e-3 * 2.0 ** 34)).sum())} outside the probe's tolerance "
      f"(ReLU and max drop NaN: tl.maximum)")

print("== cp1: two layers of one shape built after one torch.manual_seed")
cp1 = load("conv/cp1_packed_weights_cached_on_the_initial_seed.py")
torch.manual_seed(0)
a, b = cp1.ModelNew(16, 40), cp1.ModelNew(16, 40)
torch.manual_seed(0)
ra, rb = conv.Model(16, 40), conv.Model(16, 40)
with torch.no_grad():
    print(f"cp1 first layer max err {err(a(x), ra(x)):.2e}; second layer max err {err(b(x), rb(x)):.2e} "
          f"(its output equals the first layer's: {torch.equal(b(x), a(x))})")

print("== ft1: a tensor updated in place and called again (the reference flip is overridden in this process too)")
ft1 = load("flip/ft1_identity_memo_with_the_reference_flip_overridden.py").ModelNew()
buf = torch.randn(37, 1000, generator=g)
first = ft1(buf)
buf.copy_(torch.randn(37, 1000, generator=g))
second = ft1(buf)
true = buf[:, torch.arange(999, -1, -1)]
print(f"ft1 second call: {int((second != true).sum())} of {true.numel()} elements wrong (equals the first answer: "
      f"{torch.equal(second, first)}); torch.flip agrees with the stale answer: {torch.equal(torch.flip(buf, [1]), second)}")

print("== fz1: a contiguous input at a storage offset (torch.chunk)")
fz1 = load("flip/fz1_indexes_from_the_storage_base.py").ModelNew()
big = torch.randn(2 * 37, 1000, generator=g)
half = torch.chunk(big, 2)[1]
got = fz1(half)
print(f"fz1 on chunk 1 (offset {half.storage_offset()}): {int((got != half[:, torch.arange(999, -1, -1)]).sum())} of "
      f"{half.numel()} elements wrong; on chunk 0: {int((fz1(torch.chunk(big, 2)[0]) != torch.chunk(big, 2)[0][:, torch.arange(999, -1, -1)]).sum())}")

print("== sk1: the interpreter runs its kernel body's numpy; the census of one call")
sk1 = load("softmax/sk1_numpy_inside_the_kernel_body_on_the_interpreter.py").ModelNew()
xs = 2 * torch.randn(7, 37, generator=g)
print("sk1 library_calls", census_of(sk1, [xs]), "max err", f"{err(sk1(xs), torch.softmax(xs.double(), -1)):.1e}")
sys.stdout.flush()
