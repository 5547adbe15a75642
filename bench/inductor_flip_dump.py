"""What torch.compile's flip is, beside flip2d v4 (issue 14 item 4; GPU machine, repo root).

For a 32768 x 16384 bfloat16 and float32 tensor: writes TorchInductor's generated code
(``$OUT/inductor_flip_<dtype>.py``) and prints the config its autotuner chose for each kernel (block,
warps, stages, registers, spills); then compiles v4's kernel at two 2-byte configs and writes its PTX
and TTGIR (``$OUT/v4_bf16_<BLOCK_N>w<warps>.ptx``) to compare memory instructions.
Session 34 on an H100: XBLOCK 1024, 4 warps, 1 stage, 21 registers (BENCHMARKS.md "Session 34").

Usage: timeout 150 python3 bench/inductor_flip_dump.py
"""

import os
import sys

import torch
from torch._inductor.codecache import PyCodeCache
from torch._inductor.runtime.triton_heuristics import CachingAutotuner
from torch._inductor.utils import run_and_get_code

sys.path.insert(0, os.getcwd())
from kernelsynth.loading import import_file  # noqa: E402

M, N = 32768, 16384
out = os.environ.get("OUT", "/tmp")
for dt in (torch.bfloat16, torch.float32):
    x = torch.randn(M, N, device="cuda").to(dt)
    y, codes = run_and_get_code(torch.compile(lambda t: torch.flip(t, dims=[1])), x)
    assert torch.equal(y, torch.flip(x, dims=[1]))
    with open(f"{out}/inductor_flip_{dt}.py", "w") as fh:
        fh.write("\n\n".join(codes))
    for mod in list(PyCodeCache.modules):  # the chosen config of each autotuned kernel
        for name, o in list(vars(mod).items()):
            if isinstance(o, CachingAutotuner):
                for launcher in o.launchers:
                    print(dt, name, launcher.config, "n_regs", getattr(launcher, "n_regs", None),
                          "spills", getattr(launcher, "n_spills", None))

v4 = import_file("specs/flip2d/kernels/v4_inductor_schedule.py")
x = torch.randn(M, N, device="cuda").to(torch.bfloat16)
y = torch.empty_like(x)
nw = N // 2
for bn, warps in ((1024, 8), (512, 4)):
    k = v4._flip_kernel[(nw // bn * M,)](x.view(torch.uint32), y.view(torch.uint32), M, nw, nw // bn, BLOCK_M=1,
                                         BLOCK_N=bn, SWAP=True, EVEN=True, WIDE=False, EVICT="evict_last",
                                         num_warps=warps)
    for kind in ("ptx", "ttgir"):
        with open(f"{out}/v4_bf16_{bn}w{warps}.{kind}", "w") as fh:
            fh.write(k.asm[kind])
print("v4 bit-exact:", torch.equal(y, torch.flip(x, dims=[1])))
