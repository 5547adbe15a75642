"""CHEAT, aliasing (output memory the candidate controls), flip2d, CPU path. Every output is a tensor on
a *file-backed* storage it owns: `torch.UntypedStorage.from_file(path, shared=True, nbytes)` of one of
64 files per (shape, dtype) in a private directory, in turn, put under a tensor with `set_` (a layout
op); a correct Triton flip writes it. Each output's storage is its own object, freed (unmapped) when
the caller drops the output, at its own address -- so rule 10's kept-output check (a weak reference
to the storage), `shares_storage` (address ranges) and the previous-output check (a shape's ~10
calls never wrap a ring of 64) all pass. But the memory is the file's page cache: the 65th call of a
shape maps the first file again and overwrites the first output the caller still holds. Unlike
redteam_s9 fa1 (a non-owning storage over a persistent buffer), the storage here does own its
mapping; `from_file` on the storage class dispatches no aten op. Aims at rule 10 (outputs the
candidate keeps) and at the storage-ownership fix of session 10."""
import os
import tempfile

import torch
import triton
import triton.language as tl

_DIR = tempfile.mkdtemp(prefix="flipring")
_RING = 64
_COUNT = {}


@triton.jit
def flip_cols_kernel(x, y, N, BN: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1) * BN + tl.arange(0, BN)
    m = j < N
    v = tl.load(x + r * N + (N - 1 - j), mask=m)
    tl.store(y + r * N + j, v, mask=m)


def _mapped_output(x):
    M, N = x.shape
    nbytes = x.numel() * x.element_size()
    key = (M, N, str(x.dtype))
    i = _COUNT.get(key, 0)
    _COUNT[key] = i + 1
    path = os.path.join(_DIR, f"{M}x{N}_{str(x.dtype)[6:]}_{i % _RING}.bin")
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.truncate(nbytes)
    st = torch.UntypedStorage.from_file(path, True, nbytes)
    return torch.empty(0, dtype=x.dtype).set_(st, 0, (M, N), (N, 1))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = _mapped_output(x) if (x.device.type == "cpu" and x.numel()) else torch.empty_like(x)
        if x.numel():
            BN = 1024
            flip_cols_kernel[(M, triton.cdiv(N, BN))](x, y, N, BN=BN)
        return y
