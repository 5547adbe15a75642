import os, torch
from torch._inductor.utils import run_and_get_code
out = os.environ.get("OUT", "/tmp")
for dt in (torch.bfloat16, torch.float32):
    x = torch.randn(32768, 16384, device="cuda").to(dt)
    f = torch.compile(lambda t: torch.flip(t, dims=[1]))
    y, codes = run_and_get_code(f, x)
    assert torch.equal(y, torch.flip(x, dims=[1]))
    with open(f"{out}/inductor_flip_{dt}.py", "w") as fh:
        fh.write("\n\n".join(codes))
    # the chosen config of each autotuned kernel of the compiled module(s)
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.runtime import triton_heuristics as th
    for mod in list(PyCodeCache.modules):
        for name, o in list(vars(mod).items()):
            if isinstance(o, th.CachingAutotuner):
                for l in o.launchers:
                    print(dt, name, l.config, "n_regs", getattr(l, "n_regs", None), "spills", getattr(l, "n_spills", None))
                    try:
                        asm = l.bin.asm
                        open(f"{out}/{dt}_{name}.ptx", "w").write(asm.get("ptx", ""))
                        open(f"{out}/{dt}_{name}.ttgir", "w").write(asm.get("ttgir", ""))
                    except Exception as e:
                        print("asm", type(e).__name__, e)

# v4's own kernel at its best 2-byte config (1024 words, 8 warps) for comparison
import sys
sys.path.insert(0, os.getcwd())
from kernelsynth.loading import import_file
m = import_file("specs/flip2d/kernels/v4_inductor_schedule.py")
x = torch.randn(32768, 16384, device="cuda").to(torch.bfloat16)
xv, y = x.view(torch.uint32), torch.empty_like(x)
nw = 16384 // 2
for BN, W in ((1024, 8), (512, 4)):
    k = m._flip_kernel[(nw // BN * 32768,)](xv, y.view(torch.uint32), 32768, nw, nw // BN, BLOCK_M=1, BLOCK_N=BN, SWAP=True,
                                          EVEN=True, WIDE=False, EVICT="evict_last", num_warps=W)
    open(f"{out}/v4_bf16_{BN}w{W}.ptx", "w").write(k.asm["ptx"])
    open(f"{out}/v4_bf16_{BN}w{W}.ttgir", "w").write(k.asm["ttgir"])
print("v4 ok", torch.equal(y, torch.flip(x, dims=[1])))
