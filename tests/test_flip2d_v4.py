"""flip2d v4 (specs/flip2d/kernels/v4_inductor_schedule.py) on the Triton interpreter: bit-exact against
torch.flip in every dtype of the spec through both of its paths (32-bit words of two 2-byte
elements, elements), mask-free (EVEN) and masked, with 32-bit and (forced) 64-bit offsets and
every eviction policy. Inputs are random bit patterns (NaN payloads, infinities, -0.0, subnormals)."""

import os
from pathlib import Path

import pytest
import torch

from kernelsynth.loading import import_file
from test_flip2d_v3 import DTYPES, random_bits, same_bits

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter path only")
V4 = import_file(Path(__file__).resolve().parents[1] / "specs" / "flip2d" / "kernels" / "v4_inductor_schedule.py")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[1])
def test_v4_is_bit_exact_on_every_path(dtype):
    # (M, N): tile-aligned (EVEN) for BLOCK_N 16 in words and not; odd N (2-byte: element path);
    # a single element / row / column
    shapes = [(4, 32 if dtype.itemsize == 2 else 16), (3, 20), (7, 33), (1, 1), (1, 130), (9, 1)]
    for i, (m, n) in enumerate(shapes):
        x = random_bits((m, n), dtype, seed=i)
        for bm, bn, ev in [(1, 16, "evict_last"), (2, 16, ""), (1, 32, "evict_first")]:
            got = V4.ModelNew(BLOCK_M=bm, BLOCK_N=bn, num_warps=4, EVICT=ev)(x)
            assert same_bits(got, torch.flip(x, dims=[1])), (dtype, m, n, bm, bn, ev)


@pytest.mark.parametrize("swap", [False, True])
def test_v4_wide_offsets_give_the_same_bits(swap):
    """The int64-offset specialisation (taken from 2^31 words on) moves the same bits."""
    dtype = torch.bfloat16 if swap else torch.float32
    x = random_bits((5, 38), dtype, seed=3)
    want = torch.flip(x, dims=[1])
    y = torch.empty_like(x)
    xv, yv, nw = (x.view(torch.uint32), y.view(torch.uint32), 19) if swap else (x, y, 38)
    nb = -(-nw // 16)
    V4._flip_kernel[(nb * 5,)](xv, yv, 5, nw, nb, BLOCK_M=1, BLOCK_N=16, SWAP=swap, EVEN=False, WIDE=True,
                               EVICT="evict_last", num_warps=4)
    assert same_bits(y, want)
