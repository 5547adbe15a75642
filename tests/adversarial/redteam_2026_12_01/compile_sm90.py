"""Compile (not run) the GPU set's Triton kernels for sm_90 with the local Triton (a CPU machine can: the
bundled ptxas makes a cubin). Run: python3 tests/adversarial/redteam_2026_12_01/compile_sm90.py"""
import importlib.util, sys, triton, traceback
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
tgt = GPUTarget("cuda", 90, 32)
def load(p):
    s = importlib.util.spec_from_file_location("m" + str(abs(hash(p))), p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
jobs = []
import os
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu") + "/"
m = load(R + "conv/h1_direct_fma.py")
base = dict(X="*fp32", Wt="*fp32", B="*fp32", Y="*fp32", C="i32", H="i32", W="i32", K="i32", PH="i32", PW="i32", LOFF="i32", NP="i32")
for flags in [dict(LOWP_MOD=0, OUT_F16=0, PART_BF16=0, RNE9=0, BUG_MODE=0, TF32=True),
              dict(LOWP_MOD=8, OUT_F16=0, PART_BF16=0, RNE9=0, BUG_MODE=0, TF32=True),
              dict(LOWP_MOD=0, OUT_F16=0, PART_BF16=1, RNE9=0, BUG_MODE=0, TF32=False)]:
    sig = dict(base)
    if not flags["TF32"]:
        sig.update(X="*bf16", Wt="*bf16", B="*bf16", Y="*bf16")
    const = dict(BLOCK_K=64, BLOCK_P=64, BLOCK_R=16 if flags["PART_BF16"] else 32, **flags)
    jobs.append((m._conv_pool, sig, const))
m2 = load(R + "conv/h2_im2col_gemm_triton.py")
jobs.append((m2._gemm, dict(A="*fp32", Bm="*fp32", Cout="*fp32", M="i32", Nn="i32", Kd="i32", sbn="i64", scn="i32"), dict(BM=32, BN=32, BK=16, TF32=True)))
jobs.append((m2._im2col, dict(X="*fp32", Col="*fp32", C="i32", H="i32", W="i32", total="i32"), dict(BLOCK=512)))
jobs.append((m2._relu_pool, dict(Cv="*fp32", B="*fp32", Y="*fp32", K="i32", H="i32", W="i32", PH="i32", PW="i32", total="i32"), dict(BLOCK=256)))
m3 = load(R + "conv/h3_split_kahan_packed.py")
jobs.append((m3._conv_fma, dict(X="*fp32", Wp="*fp32", B="*fp32", Y="*fp32", C="i32", H="i32", W="i32", K="i32", PH="i32", PW="i32", NP="i32"), dict(BLOCK_P=16, BLOCK_C=16, BLOCK_K=32)))
g1 = load(R + "conv/g1_exact_memo_streaming.py")
jobs.append((g1._differs, dict(A="*i32", Bs="*i32", FLAG="*i32", n="i32"), dict(BLOCK=4096)))
fl = load(R + "flip/fh1_row_persistent.py")
jobs.append((fl._flip_rows, dict(X="*fp32", Y="*fp32", M="i32", N="i32"), dict(BLOCK_N=128, BUG=0)))
for fn, sig, const in jobs:
    try:
        full = dict(sig); full.update({k: "constexpr" for k in const})
        src = ASTSource(fn=fn, signature=full, constexprs=const)
        k = triton.compile(src, target=tgt)
        print("OK", fn.__name__, const, "regs?", getattr(k, "n_regs", None))
    except Exception as e:
        print("FAIL", fn.__name__, const, repr(e)[:600])
