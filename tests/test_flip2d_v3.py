"""flip2d v3 (specs/flip2d/kernels/v3_wide_words.py) on the Triton interpreter: bit-exact against
torch.flip in every dtype of the spec, through each of its three paths (64-bit words, 32-bit words,
elements), with and without the mask-free EVEN specialisation. Inputs are random bit patterns, so
NaN payloads, infinities, -0.0 and subnormals are all covered: the kernel only moves bits."""

import os
from pathlib import Path

import pytest
import torch

from kernelsynth.loading import import_file

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter path only")
V3 = import_file(Path(__file__).resolve().parents[1] / "specs" / "flip2d" / "kernels" / "v3_wide_words.py")
DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32]


def random_bits(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    es = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(-2 ** 15, 2 ** 15, shape, dtype=torch.int16 if es == 2 else torch.int32, generator=g)
    if es == 4:
        raw = raw * 65536 + torch.randint(0, 2 ** 16, shape, dtype=torch.int32, generator=g)
    return raw.view(dtype)


def same_bits(a, b):
    es = a.element_size()
    view = torch.int16 if es == 2 else torch.int32
    return a.shape == b.shape and torch.equal(a.view(view), b.view(view))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[1])
def test_v3_is_bit_exact_on_every_path(dtype):
    es = torch.empty((), dtype=dtype).element_size()
    # (M, N): whole 8-byte words, tile-aligned (EVEN) and not; 2-byte rows of whole 4-byte words
    # only (N = 2 mod 4); odd N; a single element / row / column
    shapes = [(4, 64 if es == 4 else 128), (3, 20), (5, 6), (7, 33), (1, 1), (1, 130), (9, 1)]
    seen = set()
    for i, (m, n) in enumerate(shapes):
        x = random_bits((m, n), dtype, seed=i)
        seen.add(V3.word_path(x))
        for bm, bn in [(1, 32), (2, 16)]:
            got = V3.ModelNew(BLOCK_M=bm, BLOCK_N=bn, num_warps=4)(x)
            assert same_bits(got, torch.flip(x, dims=[1])), (dtype, m, n, bm, bn)
    expected = {(torch.int64, 8 // es), None} | ({(torch.int32, 1)} if es == 2 else set())
    assert seen == expected, seen


def test_v3_word_paths_choose_by_row_bytes():
    assert V3.word_path(torch.zeros(2, 4, dtype=torch.float32)) == (torch.int64, 2)
    assert V3.word_path(torch.zeros(2, 3, dtype=torch.float32)) is None
    assert V3.word_path(torch.zeros(2, 8, dtype=torch.bfloat16)) == (torch.int64, 4)
    assert V3.word_path(torch.zeros(2, 6, dtype=torch.float16)) == (torch.int32, 1)
    assert V3.word_path(torch.zeros(2, 7, dtype=torch.float16)) is None
    assert V3.word_path(torch.zeros(2, 8, dtype=torch.float64)) is None
