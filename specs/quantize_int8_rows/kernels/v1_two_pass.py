"""quantize_int8_rows v1: two Triton kernels, the row absmax then the quantization.

Kernel 1: one program per row walks it in BLOCK_N chunks and writes the row's absmax (float32,
M values). Kernel 2: a 2D grid of (row, chunk) programs re-reads x, divides by the row's scale
and rounds. x is read twice (2 * M * N * itemsize) and q written once (M * N bytes): no float32
temporaries, against v0's ten passes.

Bit-exactness with the float32 recipe: both divisions are ``tl.math.div_rn`` (IEEE round to
nearest; Triton's ``/`` is an approximate division on NVIDIA GPUs, up to 2 ulp off), and the
rounding is half-to-even like ``torch.round``: floor(v + 0.5), minus one on an exact tie that
lands on an odd number (v + 0.5 is exact for |v| < 2^22). Non-finite values count as 0
(``|x| <= FLT_MAX`` is false for NaN and Inf).
"""

import torch
import triton
import triton.language as tl

FLT_MAX = 3.4028234663852886e38


@triton.jit
def _finite_or_zero(x, FMAX: tl.constexpr):
    return tl.where(tl.abs(x) <= FMAX, x, 0.0)


@triton.jit
def _round_half_even(v):
    r = tl.floor(v + 0.5)
    odd = (r.to(tl.int32) & 1) != 0
    return tl.where(((r - v) == 0.5) & odd, r - 1.0, r)


@triton.jit
def _row_absmax_kernel(X, AMAX, N, FMAX: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc = tl.maximum(acc, tl.abs(_finite_or_zero(x, FMAX)))
    tl.store(AMAX + row, tl.maximum(tl.max(acc, axis=0), 1e-5))


@triton.jit
def _quantize_kernel(X, AMAX, Q, N, FMAX: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    scale = tl.math.div_rn(tl.load(AMAX + row), 127.0)
    x = _finite_or_zero(tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32), FMAX)
    q = tl.minimum(tl.maximum(_round_half_even(tl.math.div_rn(x, scale)), -127.0), 127.0)
    tl.store(Q + row * N + cols, q.to(tl.int8), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, BLOCK_N=1024, num_warps=4):
        super().__init__()
        self.BLOCK_N, self.num_warps = BLOCK_N, num_warps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        q = torch.empty((M, N), dtype=torch.int8, device=x.device)
        if q.numel() == 0:
            return q
        amax = torch.empty((M,), dtype=torch.float32, device=x.device)
        block = min(self.BLOCK_N, triton.next_power_of_2(N))
        _row_absmax_kernel[(M,)](x, amax, N, FMAX=FLT_MAX, BLOCK_N=block, num_warps=self.num_warps)
        _quantize_kernel[(M, triton.cdiv(N, block))](x, amax, q, N, FMAX=FLT_MAX, BLOCK_N=block,
                                                     num_warps=self.num_warps)
        return q
