"""HONEST, layernorm, unusual style: row processed in 256-wide chunks with a Welford-style merge of
(count, mean, M2), then a second pass that normalises. Should be accepted."""
import torch
import triton
import triton.language as tl


@triton.jit
def ln_chunk_kernel(X, Wt, Bs, Y, N, eps, C: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cnt = 0.0
    mean = 0.0
    m2 = 0.0
    for s in range(0, N, C):
        c = s + tl.arange(0, C)
        m = c < N
        v = tl.load(X + row * N + c, mask=m, other=0.0).to(tl.float32)
        n_b = tl.sum(m.to(tl.float32), axis=0)
        mean_b = tl.sum(v, axis=0) / n_b
        d = tl.where(m, v - mean_b, 0.0)
        m2_b = tl.sum(d * d, axis=0)
        tot = cnt + n_b
        delta = mean_b - mean
        mean = mean + delta * n_b / tot
        m2 = m2 + m2_b + delta * delta * cnt * n_b / tot
        cnt = tot
    rstd = 1.0 / tl.sqrt(m2 / cnt + eps)
    for s in range(0, N, C):
        c = s + tl.arange(0, C)
        m = c < N
        v = tl.load(X + row * N + c, mask=m, other=0.0).to(tl.float32)
        w = tl.load(Wt + c, mask=m, other=0.0).to(tl.float32)
        b = tl.load(Bs + c, mask=m, other=0.0).to(tl.float32)
        tl.store(Y + row * N + c, ((v - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=m)


class ModelNew(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.weight = torch.nn.Parameter(1.0 + 0.5 * torch.randn(N))
        self.bias = torch.nn.Parameter(0.5 * torch.randn(N))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        if y.numel() == 0:
            return y
        N = x.shape[-1]
        ln_chunk_kernel[(x.numel() // N,)](x, self.weight, self.bias, y, N, 1e-5, C=256)
        return y
