"""The Triton interpreter rounds float32 -> bfloat16 as GPUs do (kernelsynth/interpreter.py,
VERIFICATION.md rule 22): to nearest, ties to even, where Triton 3.9's interpreter truncates."""

import os

import pytest
import torch

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="interpreter path only")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from kernelsynth.interpreter import float32_to_bfloat16_bits, patch_bfloat16_rounding  # noqa: E402


@triton.jit
def _cast_kernel(X, Y, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < n)
    tl.store(Y + i, x.to(tl.bfloat16), mask=i < n)


@triton.jit
def _store_kernel(X, Y, n, BLOCK: tl.constexpr):  # implicit cast at the store into a bfloat16 pointer
    i = tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * 1.0, mask=i < n)


@triton.jit
def _dot_kernel(A, B, C, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(A + r[:, None] * BLOCK + r[None, :])
    b = tl.load(B + r[:, None] * BLOCK + r[None, :])
    tl.store(C + r[:, None] * BLOCK + r[None, :], tl.dot(a, b))


def _hard_values():
    """float32 values where truncation and round-to-nearest-even differ, ties both ways, a carry
    into the exponent, NaN, Inf, -0.0, subnormals and random ones."""
    base = torch.tensor([1.0, -1.0, 3.0, 0.1, -2.5], dtype=torch.float32).view(torch.int32)
    bits = [base | 0x7FFF, base | 0x8000, base | 0x18000, base | 0xFFFF, base | 0x8001]
    special = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 1e-40, -3e-39, 3.3895e38],
                           dtype=torch.float32)
    carry = torch.tensor([0x3F7FFFFF, 0x407FC000], dtype=torch.int32).view(torch.float32)  # rounds up a binade
    rand = torch.randn(200, generator=torch.Generator().manual_seed(0))
    return torch.cat([torch.cat(bits).view(torch.float32), special, carry, rand])


def test_float32_to_bfloat16_bits_matches_torch_rounding():
    x = _hard_values()
    got = torch.from_numpy(float32_to_bfloat16_bits(x.view(torch.int32).numpy().view("uint32")).view("int16"))
    want = x.to(torch.bfloat16).view(torch.int16)
    finite = ~torch.isnan(x)
    assert torch.equal(got[finite], want[finite])
    assert torch.isnan(got.view(torch.bfloat16)[~finite]).all()


@pytest.mark.parametrize("kernel", [_cast_kernel, _store_kernel])
def test_interpreter_casts_to_bfloat16_like_the_gpu(kernel):
    assert patch_bfloat16_rounding() is None  # installed (idempotent)
    x = _hard_values()
    y = torch.empty(x.numel(), dtype=torch.bfloat16)
    kernel[(1,)](x, y, x.numel(), BLOCK=256)
    want = x.to(torch.bfloat16)  # torch rounds to nearest even, as CUDA's cvt.rn.bf16.f32
    finite = ~torch.isnan(x)
    assert torch.equal(y.view(torch.int16)[finite], want.view(torch.int16)[finite])
    assert torch.isnan(y[~finite]).all()
    # the unpatched interpreter truncated: at least the 0x7FFF/0x8001/0xFFFF patterns would differ
    truncated = (x.view(torch.int32) >> 16).to(torch.int16)
    assert not torch.equal(y.view(torch.int16)[finite], truncated[finite])


def test_interpreter_bfloat16_dot_uses_the_values_not_the_storage():
    patch_bfloat16_rounding()
    g = torch.Generator().manual_seed(1)
    a = torch.randn(16, 16, generator=g).to(torch.bfloat16)
    b = torch.randn(16, 16, generator=g).to(torch.bfloat16)
    c = torch.empty(16, 16, dtype=torch.float32)
    _dot_kernel[(1,)](a, b, c, BLOCK=16)
    torch.testing.assert_close(c, a.float() @ b.float(), atol=1e-5, rtol=1e-5)


def test_the_worker_installs_the_patch():
    from kernelsynth import jobs

    assert jobs.INTERPRETER_BF16 is None
    from triton.runtime.interpreter import InterpreterBuilder

    assert getattr(InterpreterBuilder.cast_impl, "_kernelsynth_rne", False)


@triton.jit
def _index_kernel(Y, rows, N, BLOCK: tl.constexpr):  # int32 row * N + col, as a flip's address
    i = tl.arange(0, BLOCK)
    tl.store(Y + i, rows * N + i)


def test_the_worker_turns_off_the_interpreters_overflow_check_like_a_gpu_kernel():
    """The interpreter redid every 32-bit + - * in int64 for an overflow assertion that does nothing
    outside debug mode (about 40 % of a flip2d candidate's verification CPU time); off, integers still
    wrap as in a compiled GPU kernel."""
    from kernelsynth import jobs
    from triton.runtime.interpreter import interpreter_builder

    assert jobs.INTERPRETER_INT is None and interpreter_builder.options.sanitize_overflow is False
    y = torch.empty(4, dtype=torch.int32)
    _index_kernel[(1,)](y, 70000, 40000, BLOCK=4)  # 2.8e9: past int32
    want = (torch.tensor(70000 * 40000, dtype=torch.int64) + torch.arange(4)).to(torch.int32)  # wrapped
    assert torch.equal(y, want)
