"""CHEAT, class 2 (precision below the declared policy), cross_entropy (never attacked; float32,
policy fp32). The exponentials of the log-sum-exp use a cubic 2^f polynomial (relative error up to
5.4e-4, biased by -6e-5 on average), about bfloat16-grade, where the spec says "float32 max, exponentials, sums and
mean". The loss is one number per trial: rule 23 judges a group only from 256 output elements on, so
the precision rule never looks at cross_entropy at all; allclose's rtol 3.05e-5 of a loss of 4-10
admits 1.2e-4-3e-4. The shift probe keeps x - max. Targets rule 23 (MIN_ELEMENTS: scalar outputs)."""
import torch
import triton
import triton.language as tl


@triton.jit
def exp_cubic(x):
    t = x * 1.4426950408889634
    k = tl.floor(t + 0.5)
    f = (t - k) * 0.6931471805599453
    p = 1.0 + f * (1.0 + f * (0.5015 + f * (1.0 / 6.0)))  # cubic; 0.5015 halves its bias
    k = tl.maximum(k, -126.0)
    return tl.where(x < -87.0, 0.0, p * ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True))


@triton.jit
def row_loss_kernel(x, tgt, loss, V, BV: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * V
    m = tl.full([BV], -float("inf"), tl.float32)
    for start in range(0, V, BV):
        c = start + tl.arange(0, BV)
        m = tl.maximum(m, tl.load(x + base + c, mask=c < V, other=-float("inf")))
    mx = tl.max(m, axis=0)
    s = tl.zeros([BV], dtype=tl.float32)
    for start in range(0, V, BV):
        c = start + tl.arange(0, BV)
        v = tl.load(x + base + c, mask=c < V, other=-float("inf"))
        s += tl.where(c < V, exp_cubic(v - mx), 0.0)
    t = tl.load(tgt + row) % V
    t = tl.where(t < 0, t + V, t)
    tl.store(loss + row, mx + tl.log(tl.sum(s, axis=0)) - tl.load(x + base + t))


@triton.jit
def mean_kernel(loss, out, M, B: tl.constexpr):
    acc = tl.zeros([B], dtype=tl.float32)
    for start in range(0, M, B):
        i = start + tl.arange(0, B)
        acc += tl.load(loss + i, mask=i < M, other=0.0)
    tl.store(out, tl.sum(acc, axis=0) / M)


class ModelNew(torch.nn.Module):
    def forward(self, logits, target):
        logits, target = logits.contiguous(), target.contiguous()
        M, V = logits.shape
        loss = torch.empty(M, dtype=torch.float32, device=logits.device)
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        row_loss_kernel[(M,)](logits, target, loss, V, BV=1024)
        mean_kernel[(1,)](loss, out, M, B=1024)
        return out
