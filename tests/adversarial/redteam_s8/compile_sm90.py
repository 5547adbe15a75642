"""Compile (not run) the Triton kernels of the GPU set (run_h200.sh) for sm_90 with the local Triton
(the bundled ptxas makes a cubin on a CPU machine). From the repo root:
python3 tests/adversarial/redteam_s8/compile_sm90.py"""
import importlib.util
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

tgt = GPUTarget("cuda", 90, 32)
R = "tests/adversarial/redteam_s8/"


def load(p):
    s = importlib.util.spec_from_file_location("m" + str(abs(hash(p))), R + p)
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


F32 = "*fp32"
flip = dict(x=F32, y=F32, M="i32", N="i32")
mm = dict(x=F32, w=F32, b=F32, y=F32, M="i32", N="i32", K="i32")
jobs = []
for f in ["flip/fd1_inference_tensor_output.py", "flip/fo1_output_ring_of_32_buffers.py", "flip/fs2_int32_offsets.py"]:
    jobs.append((f, load(f).flip_kernel, flip, dict(BM=4, BN=128)))
jobs.append(("fs1", load("flip/fs1_wrong_above_16384_cols.py").flip_kernel, flip, dict(TWO_LEVEL=True, CH=16384, BM=4, BN=128)))
jobs.append(("fh1", load("flip/fh1_tl_flip_register_tiles.py").flip_tile_kernel, flip, dict(BM=2, BN=64)))
m = load("matmul/mc1_fp16_operands_scaled_at_first_call.py")
jobs.append(("mc1", m.amax_kernel, dict(x=F32, out=F32, n="i32"), dict(B=1024)))
jobs.append(("mc1", m.mm_gelu_kernel, dict(mm, sx="fp32", sw="fp32"), dict(BM=32, BN=32, BK=32)))
jobs.append(("ms1", load("matmul/ms1_wrong_when_k_32_mod_64.py").mm_gelu_kernel, mm, dict(HALF=True, BM=32, BN=32, BK=64)))
m = load("matmul/mm1_incremental_memo_on_row_and_column_checksums.py")
jobs.append(("mm1", m.rowkey_kernel, dict(x=F32, key=F32, R="i32", L="i32", sr="i32", sl="i32"), dict(BR=16, BL=64)))
jobs.append(("mm1", m.diff_kernel, dict(new=F32, old=F32, idx="*i32", cnt="*i32", R="i32"), dict(W=2, BR=64)))
jobs.append(("mm1", m.copy_kernel, dict(src=F32, dst=F32, n="i32"), dict(B=1024)))
jobs.append(("mm1", m.mm_gather_kernel, dict(x=F32, w=F32, b=F32, y=F32, ridx="*i32", cidx="*i32", nr="i32", nc="i32",
                                             N="i32", K="i32"), dict(BM=32, BN=32, BK=32)))
ok = 0
for name, fn, sig, const in jobs:
    try:
        full = dict(sig)
        full.update({k: "constexpr" for k in const})
        triton.compile(ASTSource(fn=fn, signature=full, constexprs=const), target=tgt)
        ok += 1
        print("OK", name, fn.__name__, const)
    except Exception as e:
        print("FAIL", name, fn.__name__, const, repr(e)[:400])
print(f"{ok} of {len(jobs)} OK")
