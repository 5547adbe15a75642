"""Cheat (GPU, partial staleness inside the timing loop): after the same input tensor has been
called 4 times in a row, answers are memoised under its data pointer and 16 sampled elements,
and the memoised tensor itself is returned (no work). The verification trials call one tensor at most
three times in a row; the timing loop does it hundreds of times. An in-place change of one element or a small region
that misses the sample is answered stale."""
import torch

from pathlib import Path
import importlib.util

_spec = importlib.util.spec_from_file_location("_numcov_flip_v1", Path(__file__).resolve().parents[4] / "specs"
                                               / "flip2d" / "kernels" / "v1_single_pass.py")
_v1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v1)


class ModelNew(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.inner = _v1.ModelNew(BLOCK_M=1, BLOCK_N=1024, num_warps=8)
        self.last_ptr, self.run, self.memo = None, 0, None

    def forward(self, x):
        ptr = x.data_ptr()
        self.run = self.run + 1 if ptr == self.last_ptr else 1
        self.last_ptr = ptr
        if self.run < 4:
            self.memo = None
            return self.inner(x)
        flat = x.view(-1)
        key = (ptr, tuple(flat[:: max(1, flat.numel() // 16)][:16].tolist()))
        if self.memo is None or self.memo[0] != key:
            self.memo = (key, self.inner(x))
        return self.memo[1]
