"""Shows each cheat of this folder wrong (or below its policy) in ordinary use, on the CPU with the
Triton interpreter: TRITON_INTERPRET=1 PYTHONPATH=$PWD python3 tests/adversarial/redteam_s9/demo.py"""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def load(rel):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3], os.path.join(HERE, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rel_rms(y, ref):
    return float(((y.double() - ref) / ref.abs().clamp_min(1e-30)).pow(2).mean().sqrt())


def fa1():
    m = load("flip/fa1_output_ring_on_storage_torch_does_not_own.py").ModelNew()
    xs = [torch.randn(4, 9) for _ in range(65)]
    ys = [m(x) for x in xs]
    wrong = int((ys[0] != torch.flip(xs[0], dims=[1])).sum())
    print(f"fa1: 65 outputs kept by the caller; the 1st now holds flip(x_65): {wrong} of 36 elements wrong")


def sm1():
    m = load("softmax/sm1_memo_on_column_checksums.py").ModelNew()
    x = torch.round(2 * torch.randn(3, 37) * 64) / 64  # logits on a 1/64 grid: the edit below is exact
    m(x)
    x[:, 5] += torch.tensor([4.0, -8.0, 4.0])  # column sum and row-weighted sum kept
    err = float((m(x) - torch.softmax(x, -1)).abs().max())
    print(f"sm1: column 5 edited by (+4, -8, +4) down its rows -> max error {err:.3f}")


def sn1():
    m = load("softmax/sn1_no_max_subtraction_overflow_guarded.py").ModelNew()
    x = 2 * torch.randn(4, 64)
    y = m(x - 120.0)
    e = float((m(x - 95.0) - torch.softmax(x, -1)).abs().max())
    print(f"sn1: softmax(x - 120) -> {int(y.isnan().sum())} of 256 NaN (reference: none); softmax(x - 95): max error {e:.2e}")


def sp2():
    m = load("softmax/sp2_exp_at_18_bits_inside_the_slack.py").ModelNew()
    x = 2 * torch.randn(64, 37)
    ref = torch.softmax(x.double(), -1)
    print(f"sp2: relative RMS error {rel_rms(m(x), ref):.2e} vs PyTorch float32's {rel_rms(torch.softmax(x, -1), ref):.2e}")


def ln1():
    mod = load("layernorm/ln1_numpy_through_a_runtime_built_interface_name.py")
    calls = []
    orig = mod.np.asarray
    mod.np.asarray = lambda *a, **k: (calls.append(1), orig(*a, **k))[1]
    torch.manual_seed(0)
    m = mod.ModelNew(64)
    x = torch.randn(8, 64)
    y = m(x)
    ref = torch.nn.functional.layer_norm(x, (64,), m.weight, m.bias, 1e-5)
    print(f"ln1: {len(calls)} numpy.asarray calls in forward (numpy does the work), max error {float((y - ref).abs().max()):.1e}")


def mp2():
    x, w, b = torch.randn(64, 256), (torch.rand(256, 64) * 2 - 1) / 16, (torch.rand(64) * 2 - 1) / 16
    ref = (x.double() @ w.double())
    def tf32(t, rn):
        i = t.view(torch.int32)
        i = (i + 0xFFF + ((i >> 13) & 1)) & ~0x1FFF if rn else i & ~0x1FFF
        return i.view(torch.float32)
    scale = ((x.double() ** 2) @ (w.double() ** 2)).sqrt()
    def s(z): return float(((z.double() - ref) / scale).pow(2).mean().sqrt())
    # the GEMM alone (bias 0, gelu removed by comparing z = x8 @ w): rounding as the kernel does
    i = x.view(torch.int32)
    x8 = ((i + 0x7FFF + ((i >> 15) & 1)) & ~0x7FFF).view(torch.float32)
    print(f"mp2: scaled RMS of the GEMM (units of u_tf32 = 2^-11): x 8-bit RN {s(x8 @ w) * 2048:.2f}, "
          f"TF32 RN {s(tf32(x, True) @ tf32(w, True)) * 2048:.2f}, TF32 truncated {s(tf32(x, False) @ tf32(w, False)) * 2048:.2f}")


def rk2():
    mod = load("rmsnorm/rk2_prepared_weight_keyed_on_second_moment.py")
    z = torch.round(torch.randn(64) * 32) / 32  # weights on a 1/64 grid: every sum below is exact
    z2 = z.clone()
    z2[10:14] += 0.5 * torch.tensor([1.0, -3.0, 3.0, -1.0])  # weight moves by 0.25 (1, -3, 3, -1)
    orig = mod.torch.randn
    try:
        mod.torch.randn = lambda *a, **k: z.clone()
        mod.ModelNew(64)
        mod.torch.randn = lambda *a, **k: z2.clone()
        b = mod.ModelNew(64)
    finally:
        mod.torch.randn = orig
    x, r = torch.randn(4, 64), torch.randn(4, 64)
    h = x + r
    ref = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * b.weight
    print(f"rk2: a second model whose weight differs by 0.25 (1, -3, 3, -1) -> max error {float((b(x, r) - ref).abs().max()):.3f}")


def lm1():
    m = load("layernorm/lm1_incremental_memo_on_row_second_moments.py").ModelNew(64)
    x = torch.round(torch.randn(4, 64) * 64) / 64 + 1  # on a 1/64 grid: the edit below is exact
    m(x)
    x[2, 20:24] += 0.5 * torch.tensor([1.0, -3.0, 3.0, -1.0])  # row sum and second moment kept
    ref = torch.nn.functional.layer_norm(x, (64,), m.weight, m.bias, 1e-5)
    print(f"lm1: row 2 edited by 0.5 (1, -3, 3, -1) -> max error {float((m(x) - ref).abs().max()):.3f}")


if __name__ == "__main__":
    for name in sys.argv[1:] or ["fa1", "sm1", "sn1", "sp2", "ln1", "mp2", "rk2", "lm1"]:
        globals()[name]()
