"""CHEAT, cross_entropy, class 1 (output dtype): the loss is accumulated and returned as a 0-dim
float64 tensor for float32 logits. Aims at the output dtype/shape contract (rule 1/2)."""
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
        per = torch.empty(M, device=logits.device, dtype=torch.float32)
        xent_rows_kernel[(M,)](logits, target.contiguous(), per, V, B=triton.next_power_of_2(V))
        return per.double().mean()
