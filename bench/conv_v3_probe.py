"""Exploratory probe (session 2): v3 (TMA implicit GEMM) tile sweep at the timing shape. Not part of the product."""
import itertools, os, sys
import torch, triton
sys.path.insert(0, os.getcwd())
from kernelsynth.loading import import_file
ref = import_file("specs/conv_relu_maxpool/reference.py")
v3 = import_file("specs/conv_relu_maxpool/kernels/v3_implicit_gemm.py")
dev = "cuda"; S = dict(N=32, C_in=64, C_out=128, H=128, W=128); flops = 2 * 32 * 128 * 128 * 128 * 64 * 9
bench = lambda fn: triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
for dt in ["bfloat16", "float32"]:
    dtype = getattr(torch, dt)
    x, = ref.get_inputs(S, dtype, dev, torch.Generator(device=dev).manual_seed(1))
    torch.manual_seed(0); m = ref.Model(64, 128).to(dev, dtype)
    with torch.no_grad():
        r64 = m.double()(x.double())
        xp = torch.empty((32, 130, 130, 64), dtype=dtype, device=dev)
        t = bench(lambda: v3._pad_nhwc_kernel[(32 * 130, triton.cdiv(130, 32), 1)](x, xp, 64, 128, 128, 64, BLOCK_W=32, BLOCK_C=64))
        print(f"pad_nhwc {dt} {t:.4f} ms {2 * x.numel() * x.element_size() / t / 1e6:.0f} GB/s", flush=True)
        res = []
        for bw, bc, nw, ns in itertools.product([64, 128], [32, 64], [4, 8], [2, 3, 4]):
            name = f"v3 W{bw} C{bc} w{nw} s{ns}"
            try:
                torch.manual_seed(0); c3 = v3.ModelNew(64, 128, BLOCK_W=bw, BLOCK_C=bc, num_warps=nw, num_stages=ns).to(dev, dtype)
                out = c3(x); torch.cuda.synchronize()
                err = (out.double() - r64).abs().max().item()
                t = bench(lambda: c3(x))
                k = list(v3._conv_relu_pool_kernel.device_caches[0][0].values())[-1]
                res.append((t, f"{name:28s} {dt:9s} {t:.4f} ms {flops / t / 1e9:6.1f} TF/s err={err:.2e} regs={k.n_regs} spills={k.n_spills}"))
            except Exception as ex:
                res.append((9e9, f"{name:28s} {dt:9s} FAILED {repr(ex)[:150]}"))
            print(res[-1][1], flush=True)
        print("BEST", min(res)[1], flush=True)
