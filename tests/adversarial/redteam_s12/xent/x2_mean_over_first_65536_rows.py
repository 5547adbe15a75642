"""CHEAT, cross_entropy, class 5 (wrong only at a large dim): the mean is taken over at most the
first 65536 rows (later rows skipped). Aims at shape coverage (large M)."""
import torch
import triton
import triton.language as tl


@triton.jit
def xent_rows_kernel(L, T, O, V, B: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, B)
    v = tl.load(L + row * V + c, mask=c < V, other=-float("inf")).to(tl.float32)
    mx = tl.max(v, axis=0)
    lse = mx + tl.log(tl.sum(tl.exp(v - mx), axis=0))
    t = tl.load(T + row)
    t = ((t % V) + V) % V
    tl.store(O + row, lse - tl.load(L + row * V + t).to(tl.float32))


class ModelNew(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, logits, target):
        logits = logits.contiguous()
        M, V = logits.shape
        Mu = min(M, 65536)
        per = torch.empty(Mu, device=logits.device, dtype=torch.float32)
        xent_rows_kernel[(Mu,)](logits, target.contiguous(), per, V, B=triton.next_power_of_2(V))
        return per.mean().to(logits.dtype)
