"""Compile (not run) the Triton kernels of the GPU set (bench/h200_redteam10.sh) for sm_90 with the local
Triton (the bundled ptxas makes a cubin on a CPU machine). From the repo root:
python3 tests/adversarial/redteam_s10/compile_sm90.py"""
import importlib.util

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

tgt = GPUTarget("cuda", 90, 32)
R = "tests/adversarial/redteam_s10/"


def load(p):
    s = importlib.util.spec_from_file_location("m" + str(abs(hash(p))), R + p)
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


BF = "*bf16"
mm = dict(x=BF, w=BF, b=BF, y=BF, M="i32", N="i32", K="i32")
big = dict(BM=128, BN=128, BK=64)
jobs = []
for f in ("matmul/mh1_addmm_hidden_from_the_mode_unless_profiled.py", "matmul/mq1_gemm_on_an_unjoined_side_stream.py"):
    jobs.append((f[7:10], load(f).mm_bias_gelu_kernel, mm, big))
m = load("matmul/mh1_addmm_hidden_from_the_mode_unless_profiled.py")
jobs.append(("mh1", m.gelu_rows_kernel, dict(h=BF, y=BF, n="i32"), dict(B=1024)))
m = load("matmul/mi1_census_scrubbed_from_inside_the_call.py")
jobs.append(("mi1", m.gelu_rows_kernel, dict(h=BF, y=BF, n="i32"), dict(B=1024)))
m = load("matmul/mq1_gemm_on_an_unjoined_side_stream.py")
jobs.append(("mq1", m.touch_kernel, dict(x=BF, w=BF, b=BF, scratch="*fp32", nx="i32", nw="i32", nb="i32", ns="i32"),
             dict(B=4096)))
m = load("matmul/mh2_split_k_partials_then_epilogue.py")
jobs.append(("mh2", m.splitk_partial_kernel, dict(x=BF, w=BF, ws="*fp32", M="i32", N="i32", K="i32", KS="i32"),
             dict(BM=64, BN=64, BK=32)))
jobs.append(("mh2", m.splitk_finish_kernel, dict(ws="*fp32", b=BF, y=BF, M="i32", N="i32", S="i32"), dict(B=1024)))
m = load("softmax/sg1_cuda_graph_replay_per_shape.py")
jobs.append(("sg1", m.softmax_graph_kernel, dict(x="*fp32", y="*fp32", N="i32"), dict(BN=1024)))
ok = 0
for name, fn, sig, const in jobs:
    try:
        full = dict(sig)
        full.update({k: "constexpr" for k in const})
        triton.compile(ASTSource(fn=fn, signature=full, constexprs=const), target=tgt)
        ok += 1
        print("OK", name, fn.__name__, const)
    except Exception as e:  # noqa: BLE001
        print("FAIL", name, fn.__name__, const, repr(e)[:400])
print(f"{ok} of {len(jobs)} OK")
