"""flip2d v5 (specs/flip2d/kernels/v5_mirrored_vectors.py): bit-exact against torch.flip on the Triton
interpreter through each of its paths -- 32-bit words of two 2-byte elements (swapped) and elements of
1, 2, 4 and 8 bytes; tiles that divide the tensor (MODE 0), rows of whole 16-byte chunks (MODE 1) and any
row (MODE 2); one and several rows per program; 32-bit and (forced) 64-bit offsets -- and, compiled for
sm_90 without a GPU, the claim its docstring makes: one 128-bit load and one 128-bit store per 16 bytes,
no shared memory."""

import os
import re
from pathlib import Path

import pytest
import torch

from kernelsynth.loading import import_file
from test_flip2d_v3 import random_bits

V5 = import_file(Path(__file__).resolve().parents[1] / "specs" / "flip2d" / "kernels" / "v5_mirrored_vectors.py")
INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
interpreter_only = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter path only")


def bits(x):
    return x.view(INT_OF_SIZE[x.element_size()])


def any_bits(shape, dtype, seed):
    """Random bit patterns of any element size (NaN payloads, infinities, -0.0, subnormals)."""
    size = torch.empty((), dtype=dtype).element_size()
    if size in (2, 4):
        return random_bits(shape, dtype, seed)
    g = torch.Generator().manual_seed(seed)
    raw = torch.randint(0, 256, (*shape[:-1], shape[-1] * size), dtype=torch.uint8, generator=g)
    return raw.view(dtype)


@interpreter_only
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.uint8,
                                   torch.float64], ids=lambda d: str(d).split(".")[1])
def test_v5_is_bit_exact_on_every_path(dtype):
    size = torch.empty((), dtype=dtype).element_size()
    chunk = 16 // size  # elements per 16-byte chunk (2-byte dtypes with an even N: 8 as 4 words)
    # (M, N): tiles of 16 words dividing the row (MODE 0, for BLOCK_N 16); whole chunks, not whole tiles
    # (MODE 1); neither, even and odd N (MODE 2; odd N in 2-byte dtypes: the element path); a single
    # element, row, column
    shapes = [(4, 16 * chunk), (3, 3 * chunk), (5, chunk + 2), (7, 2 * chunk + 1), (1, 1), (1, 130), (9, 1)]
    for i, (m, n) in enumerate(shapes):
        x = any_bits((m, n), dtype, seed=i)
        want = bits(torch.flip(x, dims=[1]))
        for bm, bn, ev in [(1, 16, "evict_last"), (2, 16, ""), (4, 32, "evict_first")]:
            got = V5.ModelNew(BLOCK_M=bm, BLOCK_N=bn, num_warps=4, EVICT=ev)(x)
            assert got.shape == x.shape and torch.equal(bits(got), want), (dtype, m, n, bm, bn, ev)


@interpreter_only
def test_v5_on_a_view_not_aligned_to_four_bytes():
    """A bfloat16 view starting one element into its storage cannot be read as 32-bit words: the
    element path (8 per chunk) still gives torch.flip's bits."""
    base = random_bits((6, 66), torch.bfloat16, seed=5)
    x = base.view(-1)[1:1 + 6 * 64].view(6, 64)  # contiguous, storage offset 1 element (2 bytes)
    assert x.data_ptr() % 4 != 0
    assert torch.equal(bits(V5.ModelNew(BLOCK_N=16)(x)), bits(torch.flip(x, dims=[1])))


@interpreter_only
@pytest.mark.parametrize("swap", [False, True])
def test_v5_wide_offsets_give_the_same_bits(swap):
    """The int64-offset specialisation (taken from 2^31 words on) moves the same bits."""
    dtype = torch.bfloat16 if swap else torch.float32
    x = random_bits((5, 40), dtype, seed=3)
    y = torch.empty_like(x)
    xv, yv, nw = (x.view(torch.uint32), y.view(torch.uint32), 20) if swap else (x.view(torch.int32), y.view(torch.int32), 40)
    nb = -(-nw // 16)
    V5._flip_chunks_kernel[(nb * 5,)](xv, yv, 5, nw, nb, BLOCK_M=1, BLOCK_N=16, V=4, LOGV=2, SWAP=swap, MODE=1,
                                      WIDE=True, EVICT="evict_last", num_warps=4)
    assert torch.equal(bits(y), bits(torch.flip(x, dims=[1])))


#: compiles v5's kernel for sm_90 in a process without TRITON_INTERPRET (the suite's own process
#: imported it as an interpreted function) and prints the PTX's memory instructions as JSON
PTX_SCRIPT = r"""
import json, re, sys
import triton
from triton.backends.compiler import GPUTarget
from kernelsynth.loading import import_file
word, swap = sys.argv[2], sys.argv[3] == "1"
V5 = import_file(sys.argv[1])
V = 8 if word == "*i16" else 4
src = triton.compiler.ASTSource(
    fn=V5._flip_chunks_kernel,
    signature={"X": word, "Y": word, "M": "i32", "NW": "i32", "NB": "i32", **{k: "constexpr" for k in (
        "BLOCK_M", "BLOCK_N", "V", "LOGV", "SWAP", "MODE", "WIDE", "EVICT")}},
    constexprs={"BLOCK_M": 1, "BLOCK_N": 1024, "V": V, "LOGV": V.bit_length() - 1, "SWAP": swap, "MODE": 0,
                "WIDE": False, "EVICT": "evict_last"},
    attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]})
try:
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
except Exception as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}"[:300]}))
    sys.exit(0)
print(json.dumps({"loads": re.findall(r"ld\.global\S*", ptx), "stores": re.findall(r"st\.global\S*", ptx),
                  "shared": ".shared" in ptx or "bar.sync" in ptx}))
"""


@pytest.mark.parametrize("word,swap", [("*u32", True), ("*i32", False), ("*i16", False)])
def test_v5_moves_16_bytes_per_memory_instruction_on_sm90(word, swap, tmp_path):
    """Compiled for sm_90 (no GPU needed), the mask-free path is one ld.global.v4.b32 and one
    st.global.v4.b32 per 16 bytes, with no shared memory: the chunk reversal is register renaming."""
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    kernel = Path(__file__).resolve().parents[1] / "specs" / "flip2d" / "kernels" / "v5_mirrored_vectors.py"
    proc = subprocess.run([sys.executable, "-c", PTX_SCRIPT, str(kernel), word, "1" if swap else "0"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if "error" in got:  # no ptxas / CUDA backend in this Triton build
        pytest.skip(f"Triton cannot compile for sm_90 here: {got['error']}")
    V = 8 if word == "*i16" else 4
    chunks_per_thread = 1024 // V // 128  # BLOCK_N words / V per chunk / 4 warps of 32 lanes
    assert len(got["loads"]) == len(got["stores"]) == chunks_per_thread, got
    assert all(op.endswith(".v4.b32") for op in got["loads"] + got["stores"]), got
    assert not got["shared"]
