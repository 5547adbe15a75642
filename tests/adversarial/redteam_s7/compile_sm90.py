"""Compile (not run) every Triton kernel of tests/adversarial/redteam_s7 for sm_90 with the local Triton
(a CPU machine can: the bundled ptxas makes a cubin). Run from the repo root: python3 tests/adversarial/redteam_s7/compile_sm90.py"""
import importlib.util, glob, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
tgt = GPUTarget("cuda", 90, 32)
def load(p):
    s = importlib.util.spec_from_file_location("m" + str(abs(hash(p))), p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
R = "tests/adversarial/redteam_s7/"
jobs = []
conv_sig = lambda dt: dict(x=f"*{dt}", w=f"*{dt}", b=f"*{dt}", y=f"*{dt}", C_in="i32", H="i32", W="i32", C_out="i32", PH="i32", PW="i32")
for f, bugs, dts in [("conv/h1_direct_four_window_accumulators.py", [0], ["fp32", "bf16"]), ("conv/p1_fp16_operands_under_tf32.py", [0], ["fp32"]),
                     ("conv/p2_fp16_intermediate_dithered.py", [0], ["fp32"]), ("conv/s1_wrong_when_cout_2_mod_4.py", [4], ["fp32"]),
                     ("conv_bf16/p3_bf16_split_k2_partials.py", [7], ["bf16"])]:
    m = load(R + f)
    for bug in bugs:
        for dt in dts:
            jobs.append((f, m.conv_pool_kernel, conv_sig(dt), dict(BUG=bug, BP=16, BC=32, BCI=16)))
m = load(R + "conv/m1_memo_on_bf16_rounded_input.py")
jobs.append(("m1", m.key_kernel, dict(x="*fp32", out="*i64", n="i32"), dict(B=1024)))
jobs.append(("m1", m.copy_kernel, dict(src="*fp32", dst="*fp32", n="i32"), dict(B=1024)))
m = load(R + "flip/fh1_flat_index_divmod.py"); jobs.append(("fh1", m.flip_flat_kernel, dict(x="*fp32", y="*fp32", total="i32", N="i32"), dict(BLOCK=1024)))
m = load(R + "flip/fs1_wrong_when_cols_4_mod_8_over_300.py"); jobs.append(("fs1", m.flip_rows_kernel, dict(x="*fp32", y="*fp32", M="i32", N="i32"), dict(BUG=True, BM=4, BN=128)))
m = load(R + "flip/fm1_memo_blind_to_input_tail.py"); jobs.append(("fm1", m.key_kernel, dict(x="*i32", out="*i64", n="i32"), dict(B=1024)))
m = load(R + "flip/fd1_neg_bit_view_output.py"); jobs.append(("fd1", m.neg_flip_kernel, dict(x="*fp32", y="*fp32", M="i32", N="i32"), dict(NEG=True, BM=4, BN=128)))
for f in ["softmax/sh1_online_two_rows_per_program.py", "softmax/sr1_no_max_subtraction.py"]:
    m = load(R + f); jobs.append((f, m.softmax_online_kernel, dict(x="*fp32", y="*fp32", M="i32", N="i32"), dict(BUG=False, NOMAX="sr1" in f, BM=2, BN=256)))
for f in ["layernorm/lh1_chan_combined_chunks.py", "layernorm/lr1_one_pass_raw_moments.py"]:
    m = load(R + f); jobs.append((f, m.ln_kernel, dict(x="*fp32", w="*fp32", b="*fp32", y="*fp32", M="i32", N="i32", eps="fp32"), dict(ONEPASS="lr1" in f, BM=4, BN=512)))
m = load(R + "matmul/mp1_fp16_operands_under_tf32.py"); jobs.append(("mp1", m.mm_gelu_kernel, dict(x="*fp32", w="*fp32", b="*fp32", y="*fp32", M="i32", N="i32", K="i32"), dict(BM=32, BN=32, BK=32)))
ok = 0
for name, fn, sig, const in jobs:
    try:
        full = dict(sig); full.update({k: "constexpr" for k in const})
        triton.compile(ASTSource(fn=fn, signature=full, constexprs=const), target=tgt)
        ok += 1; print("OK", name, fn.__name__, const)
    except Exception as e:
        print("FAIL", name, fn.__name__, const, repr(e)[:400])
print(f"{ok} of {len(jobs)} OK")
