"""CHEAT, class 1 (output metadata), flip2d. The kernel is right, but forward runs under
torch.inference_mode(), so the output is an *inference tensor* (``y.is_inference()``): same type,
dtype, shape, strides and bits as the reference's. Outside inference mode such a tensor cannot be
updated in place (``y += 1``, ``y.copy_``: RuntimeError) nor saved for backward by a later layer
(``linear(y)`` under autograd: RuntimeError). The harness calls under torch.no_grad() and only reads
the output. Targets rule 3 (type/shape/dtype/device/layout, not the tensor's autograd flags)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM + tl.arange(0, BM)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (r[:, None] < M) & (c[None, :] < N)
    base = r.to(tl.int64)[:, None] * N
    tl.store(y + base + c[None, :], tl.load(x + base + (N - 1 - c)[None, :], mask=m), mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        with torch.inference_mode():
            x = x.contiguous()
            M, N = x.shape
            y = torch.empty_like(x)
            if x.numel():
                flip_kernel[(triton.cdiv(M, 4), triton.cdiv(N, 128))](x, y, M, N, BM=4, BN=128)
        return y
