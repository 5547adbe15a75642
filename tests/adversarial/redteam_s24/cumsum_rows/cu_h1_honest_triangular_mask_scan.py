"""HONEST: a scan without tl.cumsum: each 64-wide tile's prefix sums are row sums of a lower-triangular
masked outer product (``sum_k [k <= j] x_k``, plain float32 adds in tl.sum's tree order), plus a
float32 carry of the earlier tiles; several rows per program."""
import torch
import triton
import triton.language as tl


@triton.jit
def _tri_scan_kernel(X, Y, M, N, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    j = tl.arange(0, BLOCK)
    tri = j[:, None] >= j[None, :]  # [output j, term k]
    for r in range(ROWS):
        row = tl.program_id(0) * ROWS + r
        if row < M:
            base = row.to(tl.int64) * N
            carry = 0.0
            for start in range(0, N, BLOCK):
                m = start + j < N
                x = tl.load(X + base + start + j, mask=m, other=0.0).to(tl.float32)
                pref = tl.sum(tl.where(tri, x[None, :], 0.0), axis=1)
                tl.store(Y + base + start + j, (pref + carry).to(Y.dtype.element_ty), mask=m)
                carry += tl.sum(x, axis=0)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            _tri_scan_kernel[(triton.cdiv(M, 4),)](x, y, M, N, ROWS=4, BLOCK=64)
        return y
