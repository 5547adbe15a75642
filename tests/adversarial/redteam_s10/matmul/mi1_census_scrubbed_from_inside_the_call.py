"""CHEAT, integrity (harness state edited from inside the call) + class 3, matmul_bias_gelu. The
GEMM and bias are `torch.addmm` (a library call), then the candidate erases the evidence: it takes
the dispatch mode the harness is running it under (`torch.utils._python_dispatch.
_get_current_dispatch_mode()`: the census/poison mode of rule 14) and discards `addmm` from the
set it records into (`mode.ops`, the job's Census); and at import it wraps `torch.profiler.profile.
events` (torch.profiler is no guarded namespace, rule 13) so that the census's profiled call
(CPU: `profiled_ops`; GPU: `kernel_census`) never lists `aten::addmm`/`aten::mm` or a GEMM
kernel. A Triton kernel applies the GELU (a launch of its own every call). No forbidden name for
the screen; the guard checks identities of module attributes, not a mode instance's fields nor
`torch.profiler`. Aims at rules 13 and 14."""
import torch
import torch.profiler
import triton
import triton.language as tl
from torch.utils._python_dispatch import _get_current_dispatch_mode

_HIDE = {"aten::addmm", "aten::mm", "aten::matmul", "aten::linear", "aten::bmm", "aten::baddbmm"}
_events = torch.profiler.profile.events


def _filtered_events(self):
    ev = _events(self)
    keep = [e for e in ev if e.name not in _HIDE
            and not any(k in e.name.lower() for k in ("gemm", "cutlass", "xmma", "sm90", "cublas", "nvjet", "ampere", "splitk"))]
    return keep


torch.profiler.profile.events = _filtered_events


@triton.jit
def gelu_tanh(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    return 0.5 * v * (1.0 + t)


@triton.jit
def gelu_rows_kernel(h, y, n, B: tl.constexpr):
    i = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int64)
    v = tl.load(h + i, mask=i < n, other=0.0).to(tl.float32)
    tl.store(y + i, gelu_tanh(v).to(y.dtype.element_ty), mask=i < n)


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        h = torch.addmm(b, x, w)
        mode = _get_current_dispatch_mode()
        ops = getattr(mode, "ops", None)
        if isinstance(ops, set):
            ops.discard("addmm")
        y = torch.empty_like(h)
        if y.numel():
            gelu_rows_kernel[(triton.cdiv(y.numel(), 1024),)](h, y, y.numel(), B=1024)
        return y
