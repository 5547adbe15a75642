"""Exploratory probe (session 2): NVRTC backend smoke test, v1/v2/v3 correctness, v3 tiling sweep,
eager/compile baselines. Not part of the product; kept for the record of how v3's tiles were chosen."""
import itertools, json, os, sys, time
import torch, triton
sys.path.insert(0, os.getcwd())
from kernelsynth.loading import import_file
from kernelsynth.backends import cuda as kc

ref = import_file("specs/conv_relu_maxpool/reference.py")
v3 = import_file("specs/conv_relu_maxpool/kernels/v3_implicit_gemm.py")
dev = "cuda"
S = dict(N=32, C_in=64, C_out=128, H=128, W=128)
flops = 2 * 32 * 128 * 128 * 128 * 64 * 9
cap = torch.cuda.get_device_capability(); arch = f"sm_{cap[0]}{cap[1]}"
print("arch", arch, "include", kc.include_dirs())
try:
    import cuda.core as cc; print("cuda.core", getattr(cc, "__version__", "?"))
except Exception as e: print("cuda.core import", e)

def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")

def models(shape, dtype):
    torch.manual_seed(0); m = ref.Model(*ref.get_init_inputs(shape)).to(dev, dtype).eval()
    return m

launch = {
  "v1": dict(kernel="conv_relu_maxpool_naive", grid=["cdiv(N * C_out * PH * PW, BLOCK)", 1, 1], block=["BLOCK", 1, 1],
             args=["x", "conv.weight", "conv.bias", "out", "N", "C_in", "H", "W", "C_out", "PH", "PW"]),
  "v2": dict(kernel="conv_relu_maxpool_tiled", grid=["cdiv(PW, 8) * cdiv(PH, 8)", "cdiv(C_out, 4 * KPT)", "N"], block=[256, 1, 1],
             args=["x", "conv.weight", "conv.bias", "out", "N", "C_in", "H", "W", "C_out", "PH", "PW"]),
}
iface = {"inputs": {"x": ["N", "C_in", "H", "W"]}, "params": {"conv.weight": ["C_out", "C_in", 3, 3], "conv.bias": ["C_out"]},
         "derived": {"PH": "H // 2", "PW": "W // 2"}, "output": ["N", "C_out", "PH", "PW"]}
src = {v: open(f"specs/conv_relu_maxpool/kernels/{f}").read() for v, f in [("v1", "v1_naive_fused.cu"), ("v2", "v2_tiled_fused.cu")]}
cfgs = {"v1": [{"BLOCK": 128}, {"BLOCK": 256}], "v2": [{"KPT": 4, "CC": 8}, {"KPT": 4, "CC": 16}, {"KPT": 8, "CC": 8}, {"KPT": 8, "CC": 16}]}
small = [dict(N=2, C_in=3, C_out=8, H=17, W=19), dict(N=1, C_in=64, C_out=128, H=31, W=30), dict(N=3, C_in=5, C_out=7, H=9, W=6)]
rows = []
for dt in ["float32", "bfloat16"]:
    dtype = getattr(torch, dt)
    g = torch.Generator(device=dev).manual_seed(1)
    x, = ref.get_inputs(S, dtype, dev, g)
    m = models(S, dtype)
    with torch.no_grad():
        r64 = m.double()(x.double()); m = models(S, dtype)
        e = bench(lambda: m(x)); err = (m(x).double() - r64).abs().max().item()
        rows.append(("eager", dt, e, err, None))
        mc = torch.compile(models(S, dtype)); mc(x)
        c = bench(lambda: mc(x)); rows.append(("compile", dt, c, (mc(x).double() - r64).abs().max().item(), None))
        mcl = models(S, dtype).to(memory_format=torch.channels_last)
        rows.append(("eager_channels_last_conv_only", dt, bench(lambda: mcl.conv(x)), 0, None))
        xn = x.permute(0, 2, 3, 1).contiguous()
        rows.append(("nhwc_permute", dt, bench(lambda: x.permute(0, 2, 3, 1).contiguous()), 0, None))
        for v in ["v1", "v2"]:
            for cfg in cfgs[v]:
                try:
                    t0 = time.perf_counter()
                    km = kc.RawKernelModel(models(S, dtype), src[v], launch[v], iface, cfg, dt, arch)
                    ct = time.perf_counter() - t0
                    for sh in small:
                        xs, = ref.get_inputs(sh, dtype, dev, g); ms = models(sh, dtype)
                        kms = kc.RawKernelModel(ms, src[v], launch[v], iface, cfg, dt, arch)
                        e_s = (kms(xs).double() - ms.double()(xs.double())).abs().max().item()
                        assert e_s < 2e-2, (v, cfg, sh, e_s)
                    out = km(x); torch.cuda.synchronize()
                    t = bench(lambda: km(x)) if v != "v1" or cfg["BLOCK"] == 256 else None
                    rows.append((f"{v} {cfg}", dt, t, (out.double() - r64).abs().max().item(), km.compile_stats() | {"wall_build_s": ct}))
                except Exception as ex:
                    rows.append((f"{v} {cfg}", dt, None, None, repr(ex)[:300]))
        for bp, bc, nw, ns in itertools.product([32, 64], [32, 64], [4, 8], [3, 4]):
            try:
                torch.manual_seed(0); c3 = v3.ModelNew(64, 128, BLOCK_P=bp, BLOCK_C=bc, num_warps=nw, num_stages=ns).to(dev, dtype)
                out = c3(x); torch.cuda.synchronize()
                err = (out.double() - r64).abs().max().item()
                t = bench(lambda: c3(x))
                k = list(v3._conv3x3_relu_pool2_kernel.device_caches[0][0].values())[-1]
                rows.append((f"v3 P{bp} C{bc} w{nw} s{ns}", dt, t, err, {"regs": k.n_regs, "spills": k.n_spills}))
            except Exception as ex:
                rows.append((f"v3 P{bp} C{bc} w{nw} s{ns}", dt, None, None, repr(ex)[:200]))
for name, dt, t, err, extra in rows:
    tf = f"{flops / t / 1e9:7.1f} TF/s" if t else ""
    print(f"{name:40s} {dt:9s} {t if t is None else round(t, 4)!s:>9} ms {tf}  err={err}  {extra or ''}")
# cache hit check
t0 = time.perf_counter(); k = kc.compile_kernel(src["v2"], "conv_relu_maxpool_tiled", kc.defines("float32", {"KPT": 8, "CC": 16}), arch); print("second compile", time.perf_counter() - t0, k.cached)
