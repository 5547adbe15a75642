"""Compile (not run) the Triton kernels of the GPU set (bench/h200_redteam11.sh) for sm_90 with the local
Triton (the bundled ptxas makes a cubin on a CPU machine). From the repo root:
python3 tests/adversarial/redteam_s11/compile_sm90.py"""
import importlib.util

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

tgt = GPUTarget("cuda", 90, 32)
R = "tests/adversarial/redteam_s11/"


def load(p):
    s = importlib.util.spec_from_file_location("m" + str(abs(hash(p))), R + p)
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


F = "*fp32"
jobs = []
conv_sig = dict(X=F, Wt=F, B=F, Y=F, C="i32", H="i32", W="i32", K="i32", PH="i32", PW="i32")
for mode in (0, 2):
    jobs.append(("cw1", load("conv/cw1_fp16_operands_when_no_poisoning_mode_is_on.py").conv_pool_kernel, conv_sig,
                 dict(BP=16, BK=64, BC=32, MODE=mode)))
jobs.append(("cp1", load("conv/cp1_packed_weights_cached_on_the_initial_seed.py").conv_pool_kernel, conv_sig,
             dict(BP=16, BK=64, BC=32, MODE=0)))
jobs.append(("co1", load("conv/co1_convolution_through_redispatch_below_the_python_key.py").bias_relu_pool_kernel,
             dict(C=F, B=F, Y=F, K="i32", H="i32", W="i32", PH="i32", PW="i32", total="i32"), dict(BLOCK=1024)))
jobs.append(("ch1", load("conv/ch1_winograd_f2x2_3x3_fused_pool.py").winograd_pool_kernel,
             dict(X=F, U=F, B=F, Y=F, C="i32", H="i32", W="i32", K="i32", PH="i32", PW="i32"),
             dict(BP=16, BK=32, BC=16)))
jobs.append(("ch1", load("conv/ch1_winograd_f2x2_3x3_fused_pool.py").filter_transform_kernel,
             dict(Wt=F, U=F, C="i32", K="i32"), dict(BLOCK=256)))
mm_sig = dict(X=F, Wt=F, B=F, Y=F, M="i32", N="i32", K="i32")
for mode in (0, 2):
    jobs.append(("mw1", load("matmul/mw1_fp16_operands_when_unwatched.py").gemm_bias_gelu_kernel, mm_sig,
                 dict(BM=128, BN=128, BK=32, MODE=mode, GROUP=8)))
jobs.append(("mh3", load("matmul/mh3_bf16x3_split_operands.py").gemm3_kernel, mm_sig, dict(BM=128, BN=128, BK=32)))
jobs.append(("mo1", load("matmul/mo1_addmm_through_redispatch.py").gelu_kernel, dict(Z=F, Y=F, n="i32"), dict(BLOCK=4096)))
jobs.append(("fh5", load("flip/fh5_persistent_grid_stride_tiles.py").flip_persistent_kernel,
             dict(X=F, Y=F, M="i32", N="i32", n_col_tiles="i32", n_tiles="i32"), dict(BM=4, BN=1024)))
jobs.append(("fo1", load("flip/fo1_flip_through_redispatch.py").copy_kernel, dict(src=F, dst=F, n="i32"), dict(BLOCK=4096)))
jobs.append(("fo2", load("flip/fo2_redispatched_flip_under_empty_grid_placeholders.py").flip_placeholder, dict(X=F), {}))
jobs.append(("ft1", load("flip/ft1_identity_memo_with_the_reference_flip_overridden.py").flip_kernel,
             dict(X=F, Y=F, M="i32", N="i32"), dict(BM=4, BN=1024)))
jobs.append(("fz1", load("flip/fz1_indexes_from_the_storage_base.py").flip_kernel,
             dict(X=F, Y=F, M="i32", N="i32"), dict(BM=4, BN=1024)))
jobs.append(("sk1", load("softmax/sk1_numpy_inside_the_kernel_body_on_the_interpreter.py").row_kernel,
             dict(X=F, Y=F, N="i32"), dict(B=1024)))
jobs.append(("xo1", load("xent/xo1_log_softmax_through_redispatch.py").pick_mean_kernel,
             dict(LP=F, T="*i64", Y=F, M="i32", V="i32"), dict(BLOCK=1024)))
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
