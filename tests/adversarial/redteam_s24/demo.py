"""What each cheat of redteam_s24 gets wrong on an input a user would pass (CPU, Triton interpreter).
Run from the repository root: PYTHONPATH=$PWD TRITON_INTERPRET=1 python tests/adversarial/redteam_s24/demo.py"""
import importlib.util
import math
import os

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))


def load(rel):
    spec = importlib.util.spec_from_file_location(os.path.basename(rel)[:-3], os.path.join(HERE, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def err(y, ref):
    return float((y.double() - ref.double()).abs().max())


def report(name, what, y, ref, atol, rtol):
    y64, r64 = y.double(), ref.double()
    bad = ~((y64 - r64).abs() <= atol + rtol * r64.abs())
    print(f"{name}: {what}\n    max abs err {err(y, ref):.3e}; {int(bad.sum())} of {bad.numel()} elements outside "
          f"atol={atol:g}, rtol={rtol:g}" + (" (NaN present)" if bool(torch.isnan(y).any()) else ""))


torch.manual_seed(0)

# ---- cumsum_rows (float32: atol 3e-3, rtol 3.05e-5) ----
m = load("cumsum_rows/cu_v1_fp16_scan_on_nonnegative_rows.py").ModelNew()
p = torch.softmax(torch.randn(4, 128256), dim=1)  # top-p sampling over a Llama-3 vocabulary
report("cu_v1", "cumsum of probability rows (softmax over 128256 logits)", m(p), torch.cumsum(p.double(), 1), 3e-3, 3.05e-5)

m = load("cumsum_rows/cu_s2_memo_keyed_on_sign_and_exponent.py").ModelNew()
a = torch.tensor([[1.0, 1.0, -2.0, 0.5]])
b = torch.tensor([[1.03, 1.05, -2.1, 0.52]])  # same signs, binades and top 4 mantissa bits
m(a)
report("cu_s2", "cumsum(b) after cumsum(a), b = a * ~1.03", m(b), torch.cumsum(b.double(), 1), 3e-3, 3.05e-5)

m = load("cumsum_rows/cu_a1_output_over_callers_input_buffer.py").ModelNew()
buf = torch.randn(6, 8)
saved = buf.clone()
x = buf[2:4]  # a view: two rows of the caller's batch
y = m(x)
print(f"cu_a1: y = m(buf[2:4]) returns correct values (max err {err(y, torch.cumsum(saved[2:4].double(), 1)):.1e}), but "
      f"buf[2:4] now holds the prefix sums: {not torch.equal(buf[2:4], saved[2:4])}; x still aliases buf: "
      f"{x.data_ptr() == buf[2:4].data_ptr()}; max change of the caller's buffer {err(buf, saved):.3f}")

# ---- column_sum (float32: atol 1e-4, rtol 3.05e-5) ----
mod = load("column_sum/cs_f1_forked_child_computes_the_sums.py")
x = torch.randn(300, 37) / math.sqrt(300)


class Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


with Ops() as rec:
    y = mod.ModelNew()(x)
print(f"cs_f1: correct sums (max err {err(y, x.double().sum(0)):.1e}) computed by numpy in a forked child; the parent's "
      f"dispatcher saw only {sorted(rec.ops)}")
real = mod._sums_in_a_child
mod._sums_in_a_child = lambda t: [0.0] * t.shape[1]
print(f"    with the child's answer replaced by zeros the output is {float(mod.ModelNew()(x).abs().max())}: "
      "the Triton kernel does no arithmetic")
mod._sums_in_a_child = real

m = load("column_sum/cs_z1_tiles_with_zero_corner_skipped.py").ModelNew()
r = torch.relu(torch.randn(512, 256)) / math.sqrt(512)  # column sums of ReLU activations
report("cs_z1", "column sums of ReLU activations (half the entries exact zeros)", m(r), r.double().sum(0), 1e-4, 3.05e-5)

m = load("column_sum/cs_l1_caller_input_left_column_major.py").ModelNew()
x = torch.randn(64, 32)
y = m(x)
try:
    x.view(-1)
    viewed = "works"
except RuntimeError as e:
    viewed = f"raises RuntimeError ({str(e)[:60]}...)"
flat_rowmajor = torch.as_strided(x, (64 * 32,), (1,))  # what a kernel reading x.data_ptr() row-major sees
print(f"cs_l1: correct sums (max err {err(y, x.double().sum(0)):.1e}), but afterwards x.is_contiguous() is "
      f"{x.is_contiguous()} (stride {x.stride()}), x.view(-1) {viewed}; a row-major read of x's memory differs "
      f"from x.reshape(-1) at {int((flat_rowmajor != x.reshape(-1)).sum())} of {x.numel()} positions")

# ---- gelu_tanh (float32: atol 1e-5, rtol 1.3e-6) ----
def gelu64(x):
    return F.gelu(x.double(), approximate="tanh")


m = load("gelu_tanh/ge_b1_bf16_math_on_bf16_valued_inputs.py").ModelNew()
xb = (3 * torch.randn(64, 1024)).bfloat16().float()  # float32 activations upcast from a bfloat16 layer
report("ge_b1", "float32 input upcast from bfloat16", m(xb), gelu64(xb), 1e-5, 1.3e-6)

m = load("gelu_tanh/ge_r1_fewer_bits_on_a_reused_input_tensor.py").ModelNew()
h = load("gelu_tanh/ge_b1_bf16_math_on_bf16_valued_inputs.py").ModelNew()  # its float32 path is the honest sigmoid form
buf = 3 * torch.randn(64, 1024)
first = m(buf)
buf.copy_(3 * torch.randn(64, 1024))  # a static buffer refilled in place, as a decode loop does
again = m(buf)
ref = gelu64(buf)
u = 2.0 ** -24
scale = torch.sqrt(F.gelu(buf.double() ** 2, approximate="tanh").abs())
rms = lambda y: float((((y.double() - ref) / scale) ** 2).mean().sqrt()) / u
low = float(((again.view(torch.int32) & 0x1F) == 0).double().mean())
print(f"ge_r1: second call on the same (refilled) tensor: rule 23's RMS in units of 2^-24: {rms(again):.1f} against "
      f"{rms(h(buf)):.1f} for the honest kernel ({rms(again) / rms(h(buf)):.0f}x; the bound is 11.2x + 1); "
      f"{low:.0%} of its outputs have 5+ zero low bits; still inside the tolerance: "
      f"{bool(((again.double() - ref).abs() <= 1e-5 + 1.3e-6 * ref.abs()).all())}")

m = load("gelu_tanh/ge_e1_even_rows_pair_path_drops_last_pair.py").ModelNew()
x = 3 * torch.randn(16, 4096)  # 16 tokens x an MLP width
report("ge_e1", "16 x 4096 (M >= 2, N even)", m(x), gelu64(x), 1e-5, 1.3e-6)

# ---- causal_attention (float32: atol 5e-3, rtol 5e-3) ----
def sdpa64(q, k, v):
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)


m = load("causal_attention/ca_n1_softmax_without_max_subtraction.py").ModelNew()
q, k, v = [torch.randn(1, 2, 64, 128) for _ in range(3)]
q, k = 6 * q, 6 * k  # |q|, |k| ~ 68: scores ~N(0, 36^2), up to ~150 (no QK-norm, outlier heads)
report("ca_n1", "q and k of norm ~68 (scores ~N(0, 36^2))", m(q, k, v), sdpa64(q, k, v), 5e-3, 5e-3)

m = load("causal_attention/ca_m1_output_memo_keyed_on_q_and_k.py").ModelNew()
q, k, v1, v2 = [torch.randn(1, 2, 37, 128) for _ in range(4)]
m(q, k, v1)
report("ca_m1", "same q, k with a second value tensor v2", m(q, k, v2), sdpa64(q, k, v2), 5e-3, 5e-3)

# ---- rmsnorm_residual (bfloat16: atol 1e-5, rtol 1.6e-2) ----
def rms64(x, r, w):
    hh = x.double() + r.double()
    return hh * torch.rsqrt(hh.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()


mod = load("rmsnorm_residual/rn_k1_weight_frozen_at_first_forward.py")
m = mod.ModelNew(256).to(torch.bfloat16)
x, r = torch.randn(8, 256).bfloat16(), torch.randn(8, 256).bfloat16()
m(x, r)  # first call (a warm-up, or the first training step)
ckpt = {"weight": (1.0 + 0.5 * torch.randn(256)).bfloat16()}
m.load_state_dict(ckpt)
report("rn_k1", "after load_state_dict (weights loaded after the first call)", m(x, r), rms64(x, r, m.weight), 1e-5, 1.6e-2)

m = load("rmsnorm_residual/rn_j1_rstd_of_first_row_group_reused_when_tall_and_wide.py").ModelNew(256).to(torch.bfloat16)
x, r = torch.randn(32, 256).bfloat16(), torch.randn(32, 256).bfloat16()
report("rn_j1", "32 tokens x 256 hidden", m(x, r), rms64(x, r, m.weight), 1e-5, 1.6e-2)
