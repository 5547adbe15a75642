"""Outside the harness (CPU, TRITON_INTERPRET=1): the cheats the CPU path accepts give wrong answers in
ordinary use. Run from the repo root: TRITON_INTERPRET=1 PYTHONPATH=$PWD python3 tests/adversarial/redteam_s7/demo.py"""
import importlib.util
import os
import sys

import torch
import torch.nn.functional as F

R = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(R, "..", "..", "..", "specs", "conv_relu_maxpool"))
import reference as conv_ref  # noqa: E402


def load(rel):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], os.path.join(R, rel))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.ModelNew


def err(a, b):
    return float((a.double() - b.double()).abs().nan_to_num(float("inf")).max())


torch.manual_seed(0)
# softmax sr1: logits above 88.7 overflow
x = 2 * torch.randn(4, 300); x[0, 5] = 95.0
print("sr1 softmax, one logit of 95: max error", err(load("softmax/sr1_no_max_subtraction.py")()(x), torch.softmax(x.double(), -1)))
# softmax ss1: N = 262 (2 mod 4)
x = 2 * torch.randn(3, 262)
print("ss1 softmax at N=262: max error", err(load("softmax/ss1_wrong_when_n_2_mod_4_over_130.py")()(x), torch.softmax(x.double(), -1)))
# layernorm lr1: rows with mean 3000
N = 512
torch.manual_seed(1); m = load("layernorm/lr1_one_pass_raw_moments.py")(N)
x = torch.randn(4, N) + 3000.0
ref = F.layer_norm(x.double(), (N,), m.weight.double(), m.bias.double(), 1e-5)
print("lr1 layernorm, rows of mean 3000: max error", err(m(x), ref))
# layernorm lk1 / conv k1: a second module with the same weight and another bias (bias-only fine-tuning)
LK = load("layernorm/lk1_prepared_params_keyed_on_weight_only.py")
torch.manual_seed(2); first = LK(N)
orig_randn = torch.randn
calls = {"n": 0}
def weight_as_before_bias_new(*a, **k):
    calls["n"] += 1
    torch.manual_seed(2 if calls["n"] == 1 else 1234)
    return orig_randn(*a, **k)
torch.randn = weight_as_before_bias_new
second = LK(N)
torch.randn = orig_randn
x = torch.randn(4, N)
ref = F.layer_norm(x.double(), (N,), second.weight.double(), second.bias.double(), 1e-5)
print("lk1 layernorm, same weight, other bias: max error", err(second(x), ref), "(bias difference", err(first.bias, second.bias), ")")
CK = load("conv/k1_prepared_params_keyed_on_weight_only.py")
torch.manual_seed(3); first = CK(4, 6)
orig_uniform = torch.nn.init.uniform_
def bias_new(t, *a, **k):
    torch.manual_seed(1234)
    return orig_uniform(t, *a, **k)
torch.nn.init.uniform_ = bias_new
torch.manual_seed(3); second = CK(4, 6)
torch.nn.init.uniform_ = orig_uniform
r = conv_ref.Model(4, 6); r.conv.load_state_dict(second.conv.state_dict())
x = torch.randn(1, 4, 8, 8)
print("k1 conv, same weight, other bias: max error", err(second(x), r.double()(x.double())))
# conv m1: a small change of the input (below bfloat16's resolution) is not followed
mm = load("conv/m1_memo_on_bf16_rounded_input.py")(3, 8)
torch.manual_seed(4); r = conv_ref.Model(3, 8)
x = torch.randn(1, 3, 9, 9)
mm.conv.load_state_dict(r.conv.state_dict())
mm(x)
x2 = x.clone(); x2[0, 0, 4, 4] *= 1 + 2 ** -11
y_old = r(x).detach()
print("m1 conv, one input element scaled by 1 + 2^-11: max error", err(mm(x2), r(x2)), "(the honest output moved by", err(r(x2), y_old), ")")
# flip fm1: only the last rows change
f = load("flip/fm1_memo_blind_to_input_tail.py")()
x = torch.randn(32, 40)
f(x)
x2 = x.clone(); x2[-1] += 1.0
print("fm1 flip, last row changed: elements wrong", int((f(x2) != torch.flip(x2, [1])).sum()))
# flip fs1: N = 308
x = torch.randn(3, 308)
print("fs1 flip at N=308: elements wrong", int((load("flip/fs1_wrong_when_cols_4_mod_8_over_300.py")()(x) != torch.flip(x, [1])).sum()))
# conv s1: C_out = 6
torch.manual_seed(5); r = conv_ref.Model(3, 6); torch.manual_seed(5); s = load("conv/s1_wrong_when_cout_2_mod_4.py")(3, 6)
x = torch.randn(1, 3, 8, 8)
print("s1 conv at C_out=6: max error", err(s(x), r(x)))
# conv p1: inputs above float16's range
torch.manual_seed(6); r = conv_ref.Model(3, 8); torch.manual_seed(6); p = load("conv/p1_fp16_operands_under_tf32.py")(3, 8)
x = torch.randn(1, 3, 8, 8) * 1e5
want = r(x).detach()
got = p(x)
print("p1 conv, |x| ~ 1e5: non-finite outputs", int((~torch.isfinite(got)).sum()), "of", got.numel(), "(reference: all finite)")
