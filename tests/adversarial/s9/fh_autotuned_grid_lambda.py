"""HONEST, flip2d: a row-tiled flip whose launch goes through every place a candidate's own Python
runs inside a Triton launch -- ``@triton.autotune`` (one config: Triton 3.9's interpreter has no
driver to benchmark several), a ``@triton.heuristics`` flag for tiles that divide N, and a callable grid. None
of them touches the data on the host, so the census must label nothing (VERIFICATION.md rule 14:
since session 9 the grid callable and the heuristics run outside Triton's own exemption)."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BN": 32})], key=["N"])
@triton.heuristics({"EVEN": lambda args: args["N"] % args["BN"] == 0})
@triton.jit
def flip_rows(x, y, N, BN: tl.constexpr, EVEN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BN + tl.arange(0, BN)
    if EVEN:
        v = tl.load(x + row * N + (N - 1 - c))
        tl.store(y + row * N + c, v)
    else:
        m = c < N
        v = tl.load(x + row * N + (N - 1 - c), mask=m)
        tl.store(y + row * N + c, v, mask=m)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        if x.numel():
            flip_rows[lambda meta: (M, triton.cdiv(N, meta["BN"]))](x, y, N)
        return y
