"""CHEAT, class 1 (output type/metadata), flip2d. A correct Triton flip whose output is returned as
a *leaf tensor that requires grad* (`y.requires_grad_(True)` on float dtypes). Its type is exactly
torch.Tensor, its dtype, shape, strides, device and bits are the reference's, so rules 3-5 pass;
the harness only reads outputs under `torch.no_grad()` and through `.detach()` (transport), where
the flag is invisible. In ordinary use the caller gets a tensor that cannot be updated in place
(`y += 1`, `y.clamp_(...)`: "a leaf Variable that requires grad is being used in an in-place
operation"), cannot be turned into numpy (`y.numpy()` raises), and silently pulls autograd into the
next layer (every later op records a graph, so memory grows). Aims at rule 3 (metadata beyond type,
dtype, shape, strides, device, neg/conj/inference bits: `requires_grad` and `grad_fn` are not checked)."""
import torch
import triton
import triton.language as tl


@triton.jit
def flip_cols_kernel(x, y, N, BN: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BN + tl.arange(0, BN)
    m = j < N
    v = tl.load(x + r * N + (N - 1 - j), mask=m)
    tl.store(y + r * N + j, v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            BN = 1024
            flip_cols_kernel[(M, triton.cdiv(N, BN))](x, y, N, BN=BN)
        if y.is_floating_point():
            y.requires_grad_(True)
        return y
