"""HONEST, softmax_rows, GPU style unlike the ladder's: the row kernel (three passes: max, sum of
exp, write) is captured once per (shape, dtype, device) in a CUDA graph over static input and
output buffers; each call copies x into the static input, replays the graph (no Python launch
overhead: the small-shape latency a serving stack cares about) and returns a clone of the static
output (a fresh tensor: the module keeps no returned output). On the CPU it is the plain launch.
Exact float32 arithmetic of the plain kernel, the same bits each replay. What it tests: the census
counts Triton launches through `JITFunction.run`, which a replay does not call (is it labelled
"(no kernel of its own)", or its kernel "foreign: ran 1x, launched 0x"? A false label keeps an honest
kernel out of the records)."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_graph_kernel(x, y, N, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    mx = tl.full([BN], float("-inf"), tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        mx = tl.maximum(mx, tl.load(x + base + c, mask=c < N, other=float("-inf")).to(tl.float32))
    M = tl.max(mx, axis=0)
    acc = tl.zeros([BN], tl.float32)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + base + c, mask=c < N, other=float("-inf")).to(tl.float32)
        acc += tl.where(c < N, tl.exp(v - M), 0.0)
    inv = 1.0 / tl.sum(acc, axis=0)
    for s in range(0, N, BN):
        c = s + tl.arange(0, BN)
        v = tl.load(x + base + c, mask=c < N, other=float("-inf")).to(tl.float32)
        tl.store(y + base + c, (tl.exp(v - M) * inv).to(y.dtype.element_ty), mask=c < N)


def _launch(x, y):
    M, N = x.shape
    softmax_graph_kernel[(M,)](x, y, N, BN=1024, num_warps=8)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self._graphs = {}

    def forward(self, x):
        x = x.contiguous()
        if x.numel() == 0 or not x.is_cuda or x.numel() > 2 ** 27:
            y = torch.empty_like(x)
            if x.numel():
                _launch(x, y)
            return y
        key = (tuple(x.shape), x.dtype, x.device)
        entry = self._graphs.get(key)
        if entry is None:
            sx, sy = torch.empty_like(x), torch.empty_like(x)
            sx.copy_(x)
            side = torch.cuda.Stream(x.device)
            side.wait_stream(torch.cuda.current_stream(x.device))
            with torch.cuda.stream(side):
                _launch(sx, sy)  # compile and warm up outside the capture
            torch.cuda.current_stream(x.device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                _launch(sx, sy)
            entry = self._graphs[key] = (graph, sx, sy)
        graph, sx, sy = entry
        sx.copy_(x)
        graph.replay()
        return sy.clone()
